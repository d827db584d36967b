"""meshsim.ScalingEnv from Python: Gymnasium's single-environment meanings, the same
episodes as a one-environment VectorEnv, named features, clear errors."""
import threading

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import meshsim

SHORT = {"rl.episode_s": 60, "rl.decision_interval_s": 15}  # 4 decisions an episode


def test_spaces_names_and_shapes_follow_gymnasium():
    env = meshsim.ScalingEnv(overrides=SHORT)
    assert env.observation_space.shape == (35,) and env.observation_space.dtype == np.float32
    assert isinstance(env, gym.Env)
    assert isinstance(env.action_space, spaces.MultiDiscrete) and list(env.action_space.nvec) == [5]
    assert env.metadata["render_modes"] == ["ansi"] and env.render_mode is None and env.unwrapped is env
    names = env.observation_names
    assert len(names) == 35 and len(set(names)) == 35
    assert names[:2] == ["mixed.active", "mixed.ready_soon"] and names[-1] == "burst_5m"
    obs, info = env.reset(seed=2, options={"start_instances": 3})
    assert obs.shape == (35,) and obs.dtype == np.float32
    assert obs[names.index("mixed.active")] == info["active"] == 3
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert isinstance(reward, float) and reward <= 0
    # Each feature's range is in the space (rl/env/observation.hpp's tables), and holds.
    space = env.observation_space
    assert space.low[names.index("mixed.kv")] == 0 and space.high[names.index("mixed.kv")] == 1
    assert space.high[names.index("ttft_p99")] == 10 and space.low[names.index("slope_1m")] == -np.inf
    assert space.contains(obs)
    assert terminated is False and truncated is False
    assert info["sim_seconds"] == 30
    assert meshsim.VectorEnv(num_envs=1, overrides=SHORT).observation_names == names


def test_an_episode_is_the_one_a_single_vector_env_plays():
    env = meshsim.ScalingEnv(overrides=SHORT)
    envs = meshsim.VectorEnv(num_envs=1, overrides=SHORT)
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=11)
    vobs, vinfos = envs.reset(seed=11)
    np.testing.assert_array_equal(obs, vobs[0])
    assert info["window_start_s"] == vinfos["window_start_s"][0]
    for step in range(4):
        action = rng.integers(0, 5, size=(1,))
        obs, reward, _, truncated, info = env.step(action)
        vobs, vrewards, _, vtruncated, vinfos = envs.step(action[None, :])
        assert reward == vrewards[0] and truncated == vtruncated[0] == (step == 3)
        # At the truncation the VectorEnv has already reset: its episode's end is final_obs.
        np.testing.assert_array_equal(obs, vinfos["final_obs"][0] if truncated else vobs[0])
        assert info["gpu_hours"] == (vinfos["final_info"] if truncated else vinfos)["gpu_hours"][0]


@pytest.mark.parametrize("make", [lambda: meshsim.ScalingEnv(overrides=SHORT),
                                  lambda: meshsim.VectorEnv(num_envs=2, overrides=SHORT)])
@pytest.mark.parametrize("numpy_int", [np.int64, np.uint32, np.int8])
def test_a_numpy_integer_seed_is_the_python_integer_seed(make, numpy_int):
    # Gymnasium's own reset takes only Python integers: the seed is converted once, so the
    # native episode and np_random both follow it (they once split: the native one reset,
    # then Gymnasium raised).
    by_int, by_numpy = make(), make()
    obs, _ = by_int.reset(seed=7)
    obs_numpy, _ = by_numpy.reset(seed=numpy_int(7))
    np.testing.assert_array_equal(obs, obs_numpy)
    assert by_int.np_random.integers(1 << 30) == by_numpy.np_random.integers(1 << 30)
    with pytest.raises(TypeError, match="seed: expected an integer"):
        by_numpy.reset(seed=np.float64(7))


def test_a_truncated_episode_waits_for_reset():
    env = meshsim.ScalingEnv(overrides=SHORT)
    with pytest.raises(ValueError, match=r"call reset\(\) before the first step"):
        env.step([2])
    env.reset(seed=1)
    for _ in range(4):
        *_, truncated, info = env.step([2])
    assert truncated and info["sim_seconds"] == 75
    with pytest.raises(ValueError, match=r"episode ended .* call reset\(\)"):
        env.step([2])
    _, info = env.reset()  # no seed: the environment continues its draws
    assert info["sim_seconds"] == 15
    env.step([2])


def test_bad_input_names_what_was_expected():
    with pytest.raises(ValueError, match="rl.episode_s"):
        meshsim.ScalingEnv(rl__episode_s=-5)
    env = meshsim.ScalingEnv(overrides=SHORT)
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"expected an action of shape \(1,\)"):
        env.step([1, 2])
    with pytest.raises(TypeError, match="start_instances: expected an integer, got float"):
        env.reset(options={"start_instances": 2.0})
    with pytest.raises(ValueError, match="rate_scale"):
        env.reset(options={"rate_scale": float("nan")})


def test_threads_take_turns():
    env = meshsim.ScalingEnv(overrides=SHORT)
    failures = []

    def play(seed):
        try:
            for _ in range(5):
                env.reset(seed=seed)
                for _ in range(4):
                    env.step([3])
        except ValueError as error:
            # Another thread may reset or end the episode between two steps of this one.
            if "episode ended" not in str(error):
                failures.append(error)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    workers = [threading.Thread(target=play, args=(seed,)) for seed in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers), "a thread is stuck"
    assert failures == []


# Both environment classes: closed means closed (every later call raises), closing twice
# is fine, and `with` closes; the sizes fixed at construction still answer.
@pytest.mark.parametrize("make, action", [
    (lambda: meshsim.ScalingEnv(overrides=SHORT), [2]),
    (lambda: meshsim.VectorEnv(num_envs=1, overrides=SHORT), np.ones((1, 1), dtype=np.int64)),
], ids=["ScalingEnv", "VectorEnv"])
def test_a_closed_env_refuses_calls(make, action):
    with make() as env:
        env.reset(seed=1)
    assert env.closed and env.observation_space.shape[-1] == len(env.observation_names)
    with pytest.raises(ValueError, match="closed"):
        env.reset(seed=1)
    with pytest.raises(ValueError, match="closed"):
        env.step(action)
    env.close()


def test_an_action_is_taken_exactly_when_the_action_space_contains_it():
    # A differential check of the one rule env.step and meshsim.evaluate share
    # (arguments.checked_action) against Gymnasium's own action_space.contains: random
    # candidates of every kind, each refused exactly when the space does not hold it
    # (a continuous action's finite values outside [-1, 1] are the one difference: clipped).
    discrete = meshsim.ScalingEnv(overrides=SHORT)
    continuous = meshsim.ScalingEnv(overrides=SHORT, rl__action="continuous")
    rng = np.random.default_rng(3)
    pool = [np.nan, np.inf, -np.inf, 1e30, -1, 0, 1, 2, 3, 4, 5, 7, 2.5, -0.5, 0.25, True, False, None, "1"]
    for env in (discrete, continuous):
        env.reset(seed=1)
        for _ in range(200):
            value = pool[rng.integers(len(pool))]
            for action in (np.array([value]), [value]):
                array = np.asarray(action)
                try:
                    with np.errstate(invalid="ignore"):
                        held = env.action_space.contains(array.astype(env.action_space.dtype))
                    contained = held and array.dtype.kind in ("iu" if env is discrete else "iuf")
                except (TypeError, ValueError):
                    contained = False
                finite = array.dtype.kind in "iuf" and np.isfinite(array.astype(float)).all()
                if env is continuous and finite:
                    contained = True  # clipped into the box
                try:
                    _, _, _, truncated, _ = env.step(action)
                    taken = True
                except ValueError as refused:
                    assert "action: expected 1" in str(refused), str(refused)
                    taken = False
                assert taken == contained, (env.action_space, action)
                if taken and truncated:
                    env.reset()


def test_a_window_past_the_workload_is_refused():
    env = meshsim.ScalingEnv(overrides=SHORT)
    for start in (5e5, 1e12):
        with pytest.raises(ValueError, match="window_start_s: .* is past the workload's last request"):
            env.reset(seed=1, options={"window_start_s": start})
