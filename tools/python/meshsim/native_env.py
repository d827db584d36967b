"""What meshsim.ScalingEnv and meshsim.VectorEnv share: the seed check, step, close and
the context manager around their native object (_core._ScalingEnv or _core._VectorEnv)."""
from meshsim.arguments import checked_action, exact_int, mapping


class NativeEnv:
    """Base of the environment classes; `self._native` is set by the subclass."""

    @staticmethod
    def _checked_seed(seed):
        """The seed as a Python int (a numpy integer too: Gymnasium's own reset takes only
        Python's), checked before anything is reset, so that no reset is half applied."""
        return None if seed is None else exact_int("seed", seed, 0, 2**64 - 1)

    def reset(self, *, seed=None, options=None):
        return self._native.reset(self._checked_seed(seed), mapping("options", options))

    def step(self, action):
        # An action the space does not contain (NaN, 7 of 5 choices, -1, 2.5, None, a bool,
        # an infinity) is refused, never cast; arguments.checked_action has the rule.
        native = self._native
        return native.step(checked_action(action, native.action_size, native.discrete_choices,
                                          getattr(self, "num_envs", 1)))

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
