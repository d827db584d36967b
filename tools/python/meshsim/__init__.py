"""meshsim: a discrete-event simulator and RL testbed for GPU cluster scheduling.

    import meshsim
    env = meshsim.ScalingEnv()                    # one environment, the default training recipe
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    envs = meshsim.VectorEnv(num_envs=8)          # eight of them, stepped on native threads
    obs, infos = envs.reset(seed=1)
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())

    run = meshsim.replay(trace="azure2023_conv.csv", workload__rate_scale=2)
    run.summary["slo"]["attainment"], run.requests["ttft_s"], run.timeseries["instances"]

Built by CMake with -DMESHSIM_PYTHON=ON (tools/setup.sh does) into build/python; put that
folder on PYTHONPATH. tools/python/README.md documents the API.
"""
from meshsim._core import default_scenario_path, default_training_path
from meshsim.replay import Replay, replay
from meshsim.scaling_env import ScalingEnv
from meshsim.scheduler import Scheduler
from meshsim.spaces import Box, MultiDiscrete
from meshsim.vector_env import VectorEnv

__all__ = ["Box", "MultiDiscrete", "Replay", "ScalingEnv", "Scheduler", "VectorEnv", "default_scenario_path", "default_training_path", "replay"]
