"""meshsim: a discrete-event simulator and RL testbed for GPU cluster scheduling.

    import gymnasium as gym, meshsim
    env = gym.make("meshsim/Autoscaling-v0")      # or meshsim.ScalingEnv(): the default training recipe
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    envs = meshsim.VectorEnv(num_envs=8)          # eight of them, stepped on native threads
    obs, infos = envs.reset(seed=1)
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())

    run = meshsim.replay(trace="azure2023_conv.csv", workload__rate_scale=2)
    run.summary["slo"]["attainment"], run.requests["ttft_s"], run.timeseries["instances"]

Built by CMake with -DMESHSIM_PYTHON=ON (tools/setup.sh does) into build/python (put that
folder on PYTHONPATH), or installed with `pip install .` from the checkout. The
environments are Gymnasium's (tools/setup.sh installs it in .venv); replay and Scheduler
need only numpy. tools/python/README.md documents the API.
"""
import os as _os

from meshsim import _core
from meshsim._core import default_scenario_path, default_training_path

# An installed package (pip install .) carries its own copy of configs/; a build tree's
# reads the source tree's.
_bundled_configs = _os.path.join(_os.path.dirname(__file__), "configs")
if _os.path.isdir(_bundled_configs):
    _core._use_config_folder(_bundled_configs)
from meshsim.evaluation import Evaluation, evaluate
from meshsim.replay import Replay, replay
from meshsim.scheduler import Scheduler

try:
    import gymnasium
except ImportError as missing:  # the environments need it; replay and Scheduler do not
    _why = (f"{missing}: meshsim's environments are gymnasium.Env classes; run Python from the virtual "
            "environment tools/setup.sh makes (.venv/bin/python) or pip install 'gymnasium>=1.0'")

    def ScalingEnv(*args, **kwargs):
        raise ImportError(_why)

    VectorEnv = ScalingEnv
else:
    from meshsim.scaling_env import ScalingEnv
    from meshsim.vector_env import VectorEnv

    ENV_ID = "meshsim/Autoscaling-v0"
    if ENV_ID not in gymnasium.registry:
        # max_episode_steps: the default recipe's episode (time-limit wrappers and
        # libraries read it from the spec); the environment truncates its own episodes.
        gymnasium.register(id=ENV_ID, entry_point="meshsim.scaling_env:ScalingEnv",
                           vector_entry_point="meshsim.vector_env:VectorEnv",
                           max_episode_steps=_core._episode_steps(None))

__all__ = ["Evaluation", "evaluate", "Replay", "ScalingEnv", "Scheduler", "VectorEnv", "default_scenario_path", "default_training_path", "replay"]
