"""meshsim.VectorEnv: N scaling environments, a gymnasium.vector.VectorEnv."""
import warnings

import gymnasium as gym
from gymnasium.vector.utils import batch_space

from meshsim import _core
from meshsim.arguments import exact_int, merged_overrides, path
from meshsim.native_env import NativeEnv
from meshsim.spaces import scaling_spaces


class VectorEnv(NativeEnv, gym.vector.VectorEnv):
    """N scaling environments (rl::VectorEnv) stepped on native threads, the GIL released.

    VectorEnv(num_envs=8, config=None, trace=None, threads=0, autoreset_mode=SAME_STEP, **overrides), or
    gymnasium.make_vec("meshsim/Autoscaling-v0", num_envs=8,
    vectorization_mode="vector_entry_point", ...).

    config: a scenario file (None: the default training recipe, configs/scenarios/rl-train.json);
    trace: a trace file replacing its workload (as meshsim replay --trace);
    threads: native threads stepping them, counting the caller (0: one per core, at most num_envs);
    max_episode_steps: what gymnasium.make_vec passes from the registration (each episode
    has steps_per_episode decisions, played whole: a lower limit is warned about);
    overrides: config keys, "a.b" written a__b (rl__episode_s=600) or given as
    overrides={"rl.episode_s": 600}.

    Gymnasium 1.x meanings: reset(seed=None, options=None) -> (obs, infos);
    step(actions) -> (obs, rewards, terminations, truncations, infos), with same-step
    autoreset (metadata["autoreset_mode"]): where an episode was truncated,
    infos["final_obs"] / infos["final_info"] hold its last observation and info (masks
    "_final_obs" / "_final_info") and obs is already the next episode's first. With
    autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP (Gymnasium's default, which
    its NormalizeObservation and NormalizeReward wrappers need), obs is the last
    observation and the environment's next step starts its next episode (that action
    ignored, reward 0). Gymnasium's vector wrappers (RecordEpisodeStatistics, ...) wrap it. Environment i is seeded with
    seed + i (an integer seed). infos maps each field of the environment's info
    (rl/env/scaling_env.hpp) to an array of num_envs.
    reset options: window_start_s, rate_scale, scale_up_delay_s (numbers) and
    start_instances (an integer), checked as config values are: a wrong type is a
    TypeError naming the option, a value out of range (or NaN) a ValueError.

    One VectorEnv may be shared by threads: their calls run one at a time.
    """

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs=8, config=None, trace=None, threads=0, overrides=None,
                 autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, max_episode_steps=None, **kw_overrides):
        modes = (gym.vector.AutoresetMode.SAME_STEP, gym.vector.AutoresetMode.NEXT_STEP)
        if autoreset_mode not in modes:
            raise ValueError(f"autoreset_mode: expected AutoresetMode.SAME_STEP or NEXT_STEP, got {autoreset_mode!r}")
        self._native = _core._VectorEnv(exact_int("num_envs", num_envs, 1, 4096), path("config", config),
                                        path("trace", trace),
                                        exact_int("threads", threads, 0, 4096),
                                        merged_overrides(overrides, kw_overrides),
                                        autoreset_mode == gym.vector.AutoresetMode.NEXT_STEP)
        self.metadata = {**type(self).metadata, "autoreset_mode": autoreset_mode}
        self.num_envs = self._native.num_envs
        self.single_observation_space, self.single_action_space = scaling_spaces(self._native)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # Feature i of an observation row: "<pool>.<feature>" ("mixed.kv"), then the
        # global features ("ttft_p99"); rl/env/observation.hpp documents each.
        self.observation_names = list(self._native.observation_names)
        self.threads = self._native.threads
        self.steps_per_episode = self._native.steps_per_episode
        # gymnasium.make_vec passes the registration's limit (the default recipe's
        # episode); the environments truncate their own episodes and a shorter limit is
        # not applied, so it is warned about.
        if max_episode_steps is not None and exact_int("max_episode_steps", max_episode_steps, 1, 2**32 - 1) < \
                self.steps_per_episode:
            warnings.warn(f"max_episode_steps {max_episode_steps} is below these environments' episodes of "
                          f"{self.steps_per_episode} decisions, which they play whole: set rl.episode_s for "
                          "shorter ones", stacklevel=2)
        self.closed = False

    def reset(self, *, seed=None, options=None):
        seed = self._checked_seed(seed)
        obs, infos = NativeEnv.reset(self, seed=seed, options=options)
        gym.vector.VectorEnv.reset(self, seed=seed)  # np_random follows the same seed
        return obs, infos

    def __repr__(self):
        return f"meshsim.VectorEnv(num_envs={self.num_envs}, threads={self.threads})"
