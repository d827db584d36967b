"""Action and observation spaces with Gymnasium's attributes (shape, dtype, bounds,
sample, contains), usable without gymnasium installed."""
import numpy as np


class Box:
    """Real vectors in [low, high] (Gymnasium's Box)."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()
        self._rng = np.random.default_rng()

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        # Unbounded dimensions draw from a standard normal, as Gymnasium's Box does.
        low = np.where(np.isfinite(self.low), self.low, -np.inf)
        high = np.where(np.isfinite(self.high), self.high, np.inf)
        bounded = np.isfinite(low) & np.isfinite(high)
        out = self._rng.standard_normal(self.shape)
        out = np.where(bounded, self._rng.uniform(np.where(bounded, low, 0), np.where(bounded, high, 1), self.shape), out)
        return out.astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class MultiDiscrete:
    """Integer vectors, entry i in [0, nvec[i]) (Gymnasium's MultiDiscrete)."""

    def __init__(self, nvec, dtype=np.int64):
        self.nvec = np.asarray(nvec, dtype=dtype)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(dtype)
        self._rng = np.random.default_rng()

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        return (self._rng.random(self.shape) * self.nvec).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= 0) and np.all(x < self.nvec))

    def __repr__(self):
        return f"MultiDiscrete({self.nvec})"


def scaling_spaces(observation_size, action_size, discrete_choices):
    """One scaling environment's (observation_space, action_space): observations are
    unbounded float32 vectors; actions a Box in [-1, 1] (continuous) or a MultiDiscrete of
    `discrete_choices` per entry (discrete: choice c changes a pool by c - k, with
    k = rl.discrete_max_step; target: c is the pool's target size)."""
    observations = Box(-np.inf, np.inf, (observation_size,), np.float32)
    if discrete_choices:
        return observations, MultiDiscrete([discrete_choices] * action_size)
    return observations, Box(-1.0, 1.0, (action_size,), np.float32)
