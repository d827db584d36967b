"""The scaling environments' spaces, Gymnasium's own."""
import numpy as np
from gymnasium import spaces


def scaling_spaces(observation_size, action_size, discrete_choices):
    """One scaling environment's (observation_space, action_space): observations are
    unbounded float32 vectors; actions a Box in [-1, 1] (continuous) or a MultiDiscrete of
    `discrete_choices` per entry (discrete: choice c changes a pool by c - k, with
    k = rl.discrete_max_step; target: c is the pool's target size)."""
    observations = spaces.Box(-np.inf, np.inf, (observation_size,), np.float32)
    if discrete_choices:
        return observations, spaces.MultiDiscrete([discrete_choices] * action_size)
    return observations, spaces.Box(-1.0, 1.0, (action_size,), np.float32)
