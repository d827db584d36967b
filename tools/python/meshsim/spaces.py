"""The scaling environments' spaces, Gymnasium's own."""
import numpy as np
from gymnasium import spaces


def scaling_spaces(native):
    """One scaling environment's (observation_space, action_space) from its native object:
    observations are float32 vectors in each feature's range (counts and log1p loads from
    0, KV and violation shares in [0, 1], latency ratios to rl/env/observation.hpp's cap,
    slopes unbounded); actions a Box in [-1, 1] (continuous) or a MultiDiscrete of
    `discrete_choices` per entry (discrete: choice c changes a pool by c - k, with
    k = rl.discrete_max_step; target: c is the pool's target size)."""
    low, high = np.asarray(native.observation_bounds, dtype=np.float32).reshape(-1, 2).T
    observations = spaces.Box(low, high, (native.observation_size,), np.float32)
    if native.discrete_choices:
        return observations, spaces.MultiDiscrete([native.discrete_choices] * native.action_size)
    return observations, spaces.Box(-1.0, 1.0, (native.action_size,), np.float32)
