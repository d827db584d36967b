"""meshsim's environments are Gymnasium's: ScalingEnv passes gymnasium's env checker and
is made by id, and Gymnasium's own wrappers (episode statistics, single and vector) work
on both classes as on any environment."""
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import meshsim

SHORT = {"rl__episode_s": 60, "rl__decision_interval_s": 15}  # 4 decisions an episode


def test_scaling_env_passes_gymnasiums_checker():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(meshsim.ScalingEnv(render_mode="ansi", **SHORT), skip_render_check=False)
    # Unbounded observations are the one thing it remarks on (features such as queue
    # lengths have no upper bound); nothing else.
    others = [str(w.message) for w in caught if "infinity" not in str(w.message) and "spec" not in str(w.message)]
    assert others == []


def test_made_by_id_it_is_the_same_environment():
    made = gym.make("meshsim/Autoscaling-v0", **SHORT)
    direct = meshsim.ScalingEnv(**SHORT)
    assert isinstance(made.unwrapped, meshsim.ScalingEnv)
    a, _ = made.reset(seed=9)
    b, _ = direct.reset(seed=9)
    np.testing.assert_array_equal(a, b)
    for step in range(4):
        ra = made.step(np.array([step % 5]))
        rb = direct.step(np.array([step % 5]))
        np.testing.assert_array_equal(ra[0], rb[0])
        assert ra[1:4] == rb[1:4]
    # np_random follows reset's seed, as Gymnasium asks.
    made.reset(seed=4)
    first = made.unwrapped.np_random.random()
    made.reset(seed=4)
    assert made.unwrapped.np_random.random() == first


def test_episode_statistics_record_whole_episodes():
    env = gym.wrappers.RecordEpisodeStatistics(meshsim.ScalingEnv(**SHORT))
    env.reset(seed=2)
    total = 0.0
    for _ in range(4):
        _, reward, _, truncated, info = env.step(env.action_space.sample())
        total += reward
    assert truncated and info["episode"]["l"] == 4
    assert np.isclose(info["episode"]["r"], total)

    envs = gym.make_vec("meshsim/Autoscaling-v0", num_envs=3, vectorization_mode="vector_entry_point", **SHORT)
    assert isinstance(envs, meshsim.VectorEnv)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    envs.reset(seed=1)
    returns = np.zeros(3)
    for _ in range(4):
        _, rewards, _, truncations, infos = envs.step(envs.action_space.sample())
        returns += rewards
    assert truncations.all() and infos["_episode"].all()
    np.testing.assert_allclose(infos["episode"]["r"], returns)
    np.testing.assert_array_equal(infos["episode"]["l"], [4, 4, 4])


def test_render_draws_the_last_interval_as_text():
    env = meshsim.ScalingEnv(render_mode="ansi", **SHORT)
    assert env.render() is None
    _, info = env.reset(seed=1)
    assert env.render().startswith("t=15s  instances active")
    _, reward, *_ = env.step([2])
    assert f"reward {reward:.4f}" in env.render() and "t=30s" in env.render()
    assert meshsim.ScalingEnv(**SHORT).render() is None  # no render mode: nothing drawn


def test_registered_with_the_default_recipes_episode_as_max_episode_steps():
    spec = gym.spec("meshsim/Autoscaling-v0")
    assert spec.max_episode_steps == meshsim.ScalingEnv().steps_per_episode
    # Longer episodes take their own limit, as with any registered environment.
    longer = gym.make("meshsim/Autoscaling-v0", max_episode_steps=360, rl__decision_interval_s=5)
    assert longer.spec.max_episode_steps == longer.unwrapped.steps_per_episode == 360


def test_stable_baselines3s_make_vec_env_trains_with_its_default_arguments():
    # make_vec_env asks for render_mode="rgb_array" (most environments warn, not refuse).
    pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (tools/setup.sh puts it in .venv)")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = make_vec_env("meshsim/Autoscaling-v0", n_envs=2, env_kwargs=SHORT)
        model = PPO("MlpPolicy", venv, n_steps=8, batch_size=8, n_epochs=1, seed=1).learn(16)
    assert model.num_timesteps == 16


def test_a_cleanrl_style_loop_runs_with_gymnasiums_vector_normalizers():
    # NormalizeObservation and NormalizeReward need next-step autoreset (Gymnasium's
    # default); RecordEpisodeStatistics counts whole episodes under it.
    from gymnasium.vector import AutoresetMode
    from gymnasium.wrappers import vector as vw

    envs = gym.make_vec("meshsim/Autoscaling-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.NEXT_STEP, **SHORT)
    envs = vw.RecordEpisodeStatistics(vw.NormalizeReward(vw.NormalizeObservation(envs)))
    obs, _ = envs.reset(seed=1)
    lengths, starts = [], 0
    for step in range(10):
        obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
        assert np.isfinite(obs).all() and obs.shape == (2, envs.single_observation_space.shape[0])
        if "episode" in infos:
            lengths += list(infos["episode"]["l"][infos["_episode"]])
        if step == 4:  # the step after a truncation starts the next episode, its reward 0
            assert not truncations.any()
    assert lengths == [4, 4, 4, 4], lengths


def test_next_step_autoreset_plays_the_episodes_same_step_autoreset_plays():
    # The same seeds and actions: the same rewards, with next-step's extra reset steps (reward 0) in between.
    from gymnasium.vector import AutoresetMode

    overrides = {key.replace("__", "."): value for key, value in SHORT.items()}
    same = meshsim.VectorEnv(num_envs=2, overrides=overrides)
    nxt = meshsim.VectorEnv(num_envs=2, overrides=overrides, autoreset_mode=AutoresetMode.NEXT_STEP)
    assert nxt.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    same.reset(seed=5)
    nxt.reset(seed=5)
    rng = np.random.default_rng(0)
    for step in range(8):
        actions = rng.integers(0, 5, size=(2, 1))
        s = same.step(actions)
        n = nxt.step(actions)
        np.testing.assert_array_equal(s[1], n[1])
        np.testing.assert_array_equal(s[3], n[3])
        if s[3].any():
            np.testing.assert_array_equal(n[0], s[4]["final_obs"])  # next-step shows the last observation
            restarted = nxt.step(actions)  # the extra step: the next episode's first observation
            np.testing.assert_array_equal(restarted[0], s[0])
            assert not restarted[1].any() and not restarted[3].any()
