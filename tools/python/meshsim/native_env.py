"""What meshsim.ScalingEnv and meshsim.VectorEnv share: the seed check, step, close and
the context manager around their native object (_core._ScalingEnv or _core._VectorEnv)."""
import numpy as np


def merged_overrides(overrides, kw_overrides):
    """overrides={"rl.episode_s": 600} and rl__episode_s=600 as one dict."""
    merged = dict(overrides or {})
    merged.update(kw_overrides)
    return merged


class NativeEnv:
    """Base of the environment classes; `self._native` is set by the subclass."""

    def reset(self, *, seed=None, options=None):
        if seed is not None and (int(seed) < 0 or int(seed) >= 2**64):
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {seed}")
        return self._native.reset(None if seed is None else int(seed), dict(options or {}))

    def step(self, action):
        return self._native.step(np.asarray(action))

    def close(self):
        """Frees the native environment; later reset and step calls raise ValueError."""
        if not self.closed:
            self._native.close()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
