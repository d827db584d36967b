"""What meshsim.ScalingEnv and meshsim.VectorEnv share: the seed check, step, close and
the context manager around their native object (_core._ScalingEnv or _core._VectorEnv)."""
import numpy as np
from gymnasium import spaces

from meshsim.arguments import exact_int


class NativeEnv:
    """Base of the environment classes; `self._native` is set by the subclass."""

    @staticmethod
    def _checked_seed(seed):
        """The seed as a Python int (a numpy integer too: Gymnasium's own reset takes only
        Python's), checked before anything is reset, so that no reset is half applied."""
        return None if seed is None else exact_int("seed", seed, 0, 2**64 - 1)

    def reset(self, *, seed=None, options=None):
        return self._native.reset(self._checked_seed(seed), dict(options or {}))

    def step(self, action):
        action = np.asarray(action)
        # A discrete action the space does not contain (NaN, 7 of 5 choices, -1, 2.5, None,
        # a bool) is refused as action_space.contains() refuses it, never cast.
        # (A wrong shape is left to the native step, which names both shapes.) A vector of
        # environments checks each row against the single environment's space.
        space = getattr(self, "single_action_space", self.action_space)
        if isinstance(space, spaces.MultiDiscrete) and action.size == int(np.prod(self.action_space.shape)):
            rows = action.reshape(-1, *space.shape)
            if action.dtype.kind not in "iu" or not all(space.contains(row) for row in rows):
                raise ValueError(f"action: expected {space} per environment (integers, each below its count), "
                                 f"got {action.tolist()!r}")
        return self._native.step(action)

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
