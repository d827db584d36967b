"""meshsim.ScalingEnv: one scaling environment with Gymnasium's single-environment API."""
from meshsim import _core
from meshsim.native_env import NativeEnv, merged_overrides
from meshsim.spaces import scaling_spaces


class ScalingEnv(NativeEnv):
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
        self._native = _core._ScalingEnv(config, trace, merged_overrides(overrides, kw_overrides))
        self.observation_space, self.action_space = scaling_spaces(
            self._native.observation_size, self._native.action_size, self._native.discrete_choices)
        self.observation_names = list(self._native.observation_names)
        self.closed = False

    @property
    def unwrapped(self):
        return self

    def __repr__(self):
        return f"meshsim.ScalingEnv(observations={self.observation_space.shape[0]}, actions={self.action_space})"
