"""meshsim.VectorEnv: N scaling environments with Gymnasium 1.x's vector API."""
import numpy as np

from meshsim import _core
from meshsim.spaces import Box, MultiDiscrete, scaling_spaces


class VectorEnv:
    """N scaling environments (rl::VectorEnv) stepped on native threads, the GIL released.

    VectorEnv(num_envs=8, config=None, trace=None, threads=0, **overrides)

    config: a scenario file (None: the default training recipe, configs/scenarios/rl-train.json);
    trace: a trace file replacing its workload (as meshsim replay --trace);
    threads: native threads stepping them, counting the caller (0: one per core, at most num_envs);
    overrides: config keys, "a.b" written a__b (rl__episode_s=600) or given as
    overrides={"rl.episode_s": 600}.

    Gymnasium 1.x meanings: reset(seed=None, options=None) -> (obs, infos);
    step(actions) -> (obs, rewards, terminations, truncations, infos), with same-step
    autoreset: where an episode was truncated, infos["final_obs"] / infos["final_info"]
    hold its last observation and info (masks "_final_obs" / "_final_info") and obs is
    already the next episode's first. Environment i is seeded with seed + i. infos maps
    each field of the environment's info (rl/env/scaling_env.hpp) to an array of num_envs.
    reset options: window_start_s, rate_scale, scale_up_delay_s (numbers) and
    start_instances (an integer), checked as config values are: a wrong type is a
    TypeError naming the option, a value out of range (or NaN) a ValueError.

    One VectorEnv may be shared by threads: their calls run one at a time.
    """

    metadata = {"autoreset_mode": "SameStep"}

    def __init__(self, num_envs=8, config=None, trace=None, threads=0, overrides=None, **kw_overrides):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs: expected at least 1, got {num_envs}")
        merged = dict(overrides or {})
        merged.update(kw_overrides)
        self._envs = _core._VectorEnv(int(num_envs), config, trace, int(threads), merged)
        self.num_envs = self._envs.num_envs
        obs_size, act_size = self._envs.observation_size, self._envs.action_size
        self.single_observation_space, self.single_action_space = scaling_spaces(
            obs_size, act_size, self._envs.discrete_choices)
        self.observation_space = Box(-np.inf, np.inf, (self.num_envs, obs_size), np.float32)
        if isinstance(self.single_action_space, MultiDiscrete):
            self.action_space = MultiDiscrete(np.full((self.num_envs, act_size), self._envs.discrete_choices))
        else:
            self.action_space = Box(-1.0, 1.0, (self.num_envs, act_size), np.float32)
        # Feature i of an observation row: "<pool>.<feature>" ("mixed.kv"), then the
        # global features ("ttft_p99"); rl/env/observation.hpp documents each.
        self.observation_names = list(self._envs.observation_names)
        self.threads = self._envs.threads
        self.closed = False

    def reset(self, *, seed=None, options=None):
        if seed is not None and (int(seed) < 0 or int(seed) >= 2**64):
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {seed}")
        return self._envs.reset(None if seed is None else int(seed), dict(options or {}))

    def step(self, actions):
        return self._envs.step(np.asarray(actions))

    def close(self):
        """Frees the environments; later reset and step calls raise ValueError."""
        if not self.closed:
            self._envs.close()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"meshsim.VectorEnv(num_envs={self.num_envs}, threads={self.threads})"
