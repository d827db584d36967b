"""meshsim.ScalingEnv: one scaling environment, a gymnasium.Env."""
import warnings

import gymnasium as gym

from meshsim import _core
from meshsim.arguments import merged_overrides, path
from meshsim.native_env import NativeEnv
from meshsim.spaces import scaling_spaces


class ScalingEnv(NativeEnv, gym.Env):
    """One scaling environment (rl::ScalingEnv): every decision interval the action resizes
    the pools, the interval plays out, and the agent gets an observation and a reward.

    ScalingEnv(config=None, trace=None, overrides=None, render_mode=None, **overrides)
    or gymnasium.make("meshsim/Autoscaling-v0", ...) with the same arguments.

    config: a scenario file (None: the default training recipe, configs/scenarios/rl-train.json);
    trace: a trace file replacing its workload (as meshsim replay --trace);
    overrides: config keys, "a.b" written a__b (rl__episode_s=600) or given as
    overrides={"rl.episode_s": 600}; render_mode: None or "ansi" (render() returns a text
    frame of the last interval; another mode is warned about, and render() returns None).

    Gymnasium meanings: reset(seed=None, options=None) -> (obs, info);
    step(action) -> (obs, reward, terminated, truncated, info). An episode is a window of
    the trace: it never terminates, and is truncated when its window ends; then step()
    raises ValueError until reset() starts the next one (a VectorEnv resets by itself).
    An episode has steps_per_episode decisions; meshsim/Autoscaling-v0 is registered with
    the default recipe's as max_episode_steps: pass gymnasium.make(...,
    max_episode_steps=N) when overrides make episodes longer, or its TimeLimit cuts them.
    With a seed, reset reseeds the environment (and np_random); without, it continues its
    draws. reset options are VectorEnv's: window_start_s, rate_scale, scale_up_delay_s,
    start_instances. observation_names[i] names feature i ("mixed.kv", "ttft_p99") and
    observation_space.low[i], .high[i] its range (rl/env/observation.hpp documents both).

    One ScalingEnv may be shared by threads: their calls run one at a time.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # frames a second when a run is shown

    def __init__(self, config=None, trace=None, overrides=None, render_mode=None, **kw_overrides):
        if render_mode is not None and not isinstance(render_mode, str):
            raise TypeError(f"render_mode: expected None or a mode's name, got {render_mode!r}")
        if render_mode not in (None, "ansi"):
            # As Gymnasium's own environments do: libraries ask for "rgb_array" by default
            # (Stable-Baselines3's make_vec_env), and render() then draws nothing.
            warnings.warn(f"render_mode {render_mode!r}: ScalingEnv renders only 'ansi' text; render() returns None",
                          stacklevel=2)
        self._native = _core._ScalingEnv(path("config", config), path("trace", trace),
                                         merged_overrides(overrides, kw_overrides))
        self.observation_space, self.action_space = scaling_spaces(self._native)
        self.observation_names = list(self._native.observation_names)
        self.steps_per_episode = self._native.steps_per_episode
        self.render_mode = render_mode
        self.closed = False
        self._last = None  # the last reset's or step's (info, reward), for render()

    def reset(self, *, seed=None, options=None):
        seed = self._checked_seed(seed)
        obs, info = NativeEnv.reset(self, seed=seed, options=options)
        gym.Env.reset(self, seed=seed)  # np_random follows the same seed (Gymnasium's rule)
        self._last = (info, None)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = NativeEnv.step(self, action)
        self._last = (info, reward)
        return obs, reward, terminated, truncated, info

    def render(self):
        """With render_mode "ansi": the last interval as one line of text (None before reset)."""
        if self.render_mode != "ansi" or self._last is None:
            return None
        info, reward = self._last
        return (f"t={info['sim_seconds']:.0f}s  instances active {info['active']} starting {info['starting']} "
                f"draining {info['draining']}  left {info['left']} (SLO {100 * info['slo_attainment']:.1f}%)  "
                f"GPU-h {info['gpu_hours']:.3f}" + ("" if reward is None else f"  reward {reward:.4f}"))

    def __repr__(self):
        return f"meshsim.ScalingEnv(observations={self.observation_space.shape[0]}, actions={self.action_space})"
