"""meshsim.VectorEnv from Python: Gymnasium 1.x vector meanings, spaces, determinism,
same-step autoreset and clear errors."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import meshsim

SHORT = {"rl.episode_s": 60, "rl.decision_interval_s": 15}  # 4 decisions an episode


def rollout(envs, seed, steps):
    obs, _ = envs.reset(seed=seed)
    trail = [obs]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        actions = rng.integers(0, envs.single_action_space.nvec, size=envs.action_space.shape)
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        trail += [obs, rewards, truncations, infos["active"]]
    return trail


def test_spaces_and_shapes_follow_gymnasium():
    envs = meshsim.VectorEnv(num_envs=3, overrides=SHORT)
    assert envs.num_envs == 3
    assert envs.single_observation_space.shape == (35,)
    assert envs.observation_space.shape == (3, 35)
    assert envs.single_observation_space.dtype == np.float32
    # The default recipe's actions are discrete: -2..+2 instances, choices 0..4.
    assert isinstance(envs, gym.vector.VectorEnv)
    assert isinstance(envs.single_action_space, spaces.MultiDiscrete)
    assert list(envs.single_action_space.nvec) == [5]
    assert envs.action_space.shape == (3, 1)
    obs, infos = envs.reset(seed=4)
    assert obs.shape == (3, 35) and obs.dtype == np.float32
    assert infos["active"].shape == (3,)
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
    assert rewards.shape == (3,) and rewards.dtype == np.float64
    assert terminations.dtype == np.bool_ and not terminations.any()
    assert np.all(rewards <= 0)


def test_continuous_actions_are_a_box():
    envs = meshsim.VectorEnv(num_envs=2, rl__action="continuous", overrides=SHORT)
    assert isinstance(envs.single_action_space, spaces.Box)
    assert envs.single_action_space.low[0] == -1 and envs.single_action_space.high[0] == 1
    envs.reset(seed=1)
    envs.step(np.zeros((2, 1), dtype=np.float32))


def test_the_same_seed_gives_the_same_results_with_any_threads():
    one = rollout(meshsim.VectorEnv(num_envs=4, threads=1, overrides=SHORT), 7, 9)
    two = rollout(meshsim.VectorEnv(num_envs=4, threads=2, overrides=SHORT), 7, 9)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    other = rollout(meshsim.VectorEnv(num_envs=4, threads=1, overrides=SHORT), 8, 9)
    assert any(not np.array_equal(a, b) for a, b in zip(one, other))


def test_truncated_episodes_reset_in_the_same_step():
    envs = meshsim.VectorEnv(num_envs=2, overrides=SHORT)
    envs.reset(seed=3)
    keep = np.full((2, 1), 2)  # choice 2: no change
    for step in range(4):
        obs, _, terminations, truncations, infos = envs.step(keep)
        assert not terminations.any()
        if step < 3:
            assert not truncations.any() and "final_obs" not in infos
    assert truncations.all()
    assert infos["final_obs"].shape == (2, 35)
    assert infos["_final_obs"].all() and infos["_final_info"].all()
    assert not np.array_equal(infos["final_obs"], obs), "obs is already the next episode's first"
    assert np.all(infos["final_info"]["sim_seconds"] == 75)  # 15 s of warm-up, then 4 decisions
    # The next step belongs to the new episode.
    _, _, _, truncations, infos = envs.step(keep)
    assert not truncations.any() and np.all(infos["sim_seconds"] == 30)


def test_reset_options_fix_the_window():
    envs = meshsim.VectorEnv(num_envs=2, overrides=SHORT)
    _, infos = envs.reset(seed=1, options={"window_start_s": 600, "rate_scale": 1.0, "scale_up_delay_s": 30})
    assert np.all(infos["window_start_s"] == 600) and np.all(infos["scale_up_delay_s"] == 30)
    with pytest.raises(ValueError, match="unknown key 'window'"):
        envs.reset(options={"window": 3})


def test_bad_input_names_what_was_expected():
    with pytest.raises(ValueError, match="rl.episode_s"):
        meshsim.VectorEnv(num_envs=1, rl__episode_s=-5)
    with pytest.raises(ValueError, match="no-such-file.json"):
        meshsim.VectorEnv(num_envs=1, config="no-such-file.json")
    envs = meshsim.VectorEnv(num_envs=2, overrides=SHORT)
    envs.reset(seed=1)
    with pytest.raises(ValueError, match=r"expected actions of shape \(2, 1\), got \(3, 1\)"):
        envs.step(np.zeros((3, 1)))


def test_reset_options_are_checked_like_config_values():
    envs = meshsim.VectorEnv(num_envs=1, overrides=SHORT)
    for options, error, match in [
        ({"start_instances": 10**9}, ValueError, r"start_instances: expected an integer in \[1, \d+\]"),
        ({"start_instances": 0}, ValueError, "start_instances"),
        ({"start_instances": -1}, ValueError, "start_instances"),
        ({"start_instances": 2.0}, TypeError, "start_instances: expected an integer, got float"),
        ({"start_instances": True}, TypeError, "start_instances: expected an integer, got bool"),
        ({"rate_scale": "fast"}, TypeError, "rate_scale: expected a number, got str"),
        ({"rate_scale": float("nan")}, ValueError, "rate_scale"),
        ({"rate_scale": 0.0}, ValueError, r"rate_scale: expected a number in \[1e-6, 1e6\]"),
        ({"window_start_s": float("inf")}, ValueError, "window_start_s"),
        ({"scale_up_delay_s": -1}, ValueError, "scale_up_delay_s"),
        ({"scale_up_delay_s": np.bool_(True)}, TypeError, "scale_up_delay_s"),
    ]:
        with pytest.raises(error, match=match):
            envs.reset(seed=1, options=options)
    # numpy's numbers are numbers, and its integers integers.
    _, infos = envs.reset(seed=1, options={"start_instances": np.int64(2), "rate_scale": np.float32(1.0),
                                           "window_start_s": np.int32(600)})
    assert infos["window_start_s"][0] == 600


def test_threads_sharing_one_vector_env_take_turns():
    # Two threads stepping, and one resetting while another steps: their calls run one
    # at a time (this crashed or deadlocked before), and every call returns whole results.
    import threading

    envs = meshsim.VectorEnv(num_envs=2, threads=2, overrides=SHORT)
    envs.reset(seed=3)
    failures = []

    def stepping():
        try:
            for _ in range(40):
                obs, rewards, *_ = envs.step(np.ones((2, 1), dtype=np.int64))
                assert obs.shape == (2, envs.single_observation_space.shape[0]) and rewards.shape == (2,)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    def resetting():
        try:
            for i in range(10):
                envs.reset(seed=i)
        except Exception as error:  # noqa: BLE001
            failures.append(error)

    workers = [threading.Thread(target=stepping), threading.Thread(target=stepping), threading.Thread(target=resetting)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers), "a thread is stuck"
    assert failures == []


def test_arguments_are_taken_exactly_never_cast():
    # 1.5 or "8" environments, a seed of 1.5 or True: refused, never rounded or parsed.
    for bad in (1.5, "8", True):
        with pytest.raises(TypeError, match="num_envs: expected an integer"):
            meshsim.VectorEnv(num_envs=bad, overrides=SHORT)
    with pytest.raises(ValueError, match=r"num_envs: expected an integer in \[1,"):
        meshsim.VectorEnv(num_envs=0, overrides=SHORT)
    envs = meshsim.VectorEnv(num_envs=2, overrides=SHORT)
    with pytest.raises(ValueError, match="call reset"):  # not an internal check
        envs.step(np.zeros((2, 1), dtype=np.int64))
    for bad in (1.5, "1", True):
        with pytest.raises(TypeError, match="seed: expected an integer"):
            envs.reset(seed=bad)
    with pytest.raises(ValueError, match="seed: expected an integer in"):
        envs.reset(seed=-1)
    envs.reset(seed=3)
    # A discrete action outside the space (as action_space.contains() says) is refused.
    for bad in ([[np.nan], [0]], [[7], [0]], [[-1], [0]], [[2.5], [0]], [[None], [0]], [[True], [False]]):
        with pytest.raises(ValueError, match=r"action: expected 1 integers in \[0, 4\] per environment"):
            envs.step(bad)
    envs.step(np.array([[4], [0]]))
    # An override given both as a dict key and as a__b: which would win? Refused.
    with pytest.raises(ValueError, match="rl.episode_s: given twice"):
        meshsim.VectorEnv(num_envs=1, overrides={"rl.episode_s": 60}, rl__episode_s=120)
