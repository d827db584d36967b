"""meshsim's environments are Gymnasium's: ScalingEnv passes gymnasium's env checker and
is made by id, and Gymnasium's own wrappers (episode statistics, single and vector) work
on both classes as on any environment."""
import warnings

import gymnasium as gym
import numpy as np
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
