"""meshsim.ScalingEnv: one scaling environment with Gymnasium's single-environment API."""
import numpy as np

from meshsim import _core
from meshsim.spaces import scaling_spaces


class ScalingEnv:
    """One scaling environment (rl::ScalingEnv): every decision interval the action resizes
    the pools, the interval plays out, and the agent gets an observation and a reward.

    ScalingEnv(config=None, trace=None, overrides=None, **overrides)

    config: a scenario file (None: the default training recipe, configs/scenarios/rl-train.json);
    trace: a trace file replacing its workload (as meshsim replay --trace);
    overrides: config keys, "a.b" written a__b (rl__episode_s=600) or given as
    overrides={"rl.episode_s": 600}.

    Gymnasium meanings: reset(seed=None, options=None) -> (obs, info);
    step(action) -> (obs, reward, terminated, truncated, info). An episode is a window of
    the trace: it never terminates, and is truncated when its window ends; then step()
    raises ValueError until reset() starts the next one (a VectorEnv resets by itself).
    With a seed, reset reseeds the environment; without, it continues its draws.
    reset options are VectorEnv's: window_start_s, rate_scale, scale_up_delay_s, start_instances.
    observation_names[i] names feature i ("mixed.kv", "ttft_p99"; rl/env/observation.hpp).

    One ScalingEnv may be shared by threads: their calls run one at a time.
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, config=None, trace=None, overrides=None, **kw_overrides):
        merged = dict(overrides or {})
        merged.update(kw_overrides)
        self._env = _core._ScalingEnv(config, trace, merged)
        self.observation_space, self.action_space = scaling_spaces(
            self._env.observation_size, self._env.action_size, self._env.discrete_choices)
        self.observation_names = list(self._env.observation_names)
        self.closed = False

    def reset(self, *, seed=None, options=None):
        if seed is not None and (int(seed) < 0 or int(seed) >= 2**64):
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {seed}")
        return self._env.reset(None if seed is None else int(seed), dict(options or {}))

    def step(self, action):
        return self._env.step(np.asarray(action))

    def close(self):
        """Frees the environment; later reset and step calls raise ValueError."""
        if not self.closed:
            self._env.close()
        self.closed = True

    @property
    def unwrapped(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"meshsim.ScalingEnv(observations={self.observation_space.shape[0]}, actions={self.action_space})"
