"""A Python RL library on meshsim: experiments/rl/sb3_ppo.py trains Stable-Baselines3's PPO
on meshsim/Autoscaling-v0 through SB3's own vectorised environments, and the trained
policy's deterministic return beats the untrained one's."""
import importlib.util

import pytest

pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (tools/setup.sh puts it in .venv)")


def test_sb3_ppo_trains_on_the_environment(repo, tmp_path):
    spec = importlib.util.spec_from_file_location("sb3_ppo", repo / "experiments" / "rl" / "sb3_ppo.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    overrides = example.overrides_of(["rl.episode_s=600", "rl.decision_interval_s=30"])
    assert overrides == {"rl__episode_s": 600, "rl__decision_interval_s": 30}
    model, normalizer, before, after = example.train(8192, 1, 8, overrides, str(tmp_path))
    # Returns are negative costs: the trained policy costs less.
    assert after > before, (before, after)
    action, _ = model.predict(normalizer.normalize_obs(normalizer.get_original_obs()), deterministic=True)
    assert model.action_space.contains(action[0])
    # SB3's own training curve lands in the run's folder.
    assert "train/value_loss" in (tmp_path / "progress.csv").read_text().splitlines()[0]
