"""meshsim.Scheduler: the scheduling core driven call by call, as a scenario script does."""
import functools

from collections.abc import Mapping

from meshsim import _core
from meshsim.arguments import flag, path


class Scheduler:
    """The scheduling core with a simulated cluster and clock.

    Scheduler(setup=None, allow_files=True)

    setup: None (one large default node), a dict, or the path of a JSON/YAML file, with a
    scenario script's "nodes", "serving" and "scaling" objects (README, "Scenario
    scripts"). Every call of a script is a method with the same name, keyword arguments
    and result dict: sched.create_pool(name="train", resources={"gpu": 8}),
    sched.submit_task_with_preemption(task_id="t1", pool_name="train", ...),
    sched.advance(seconds=30). A call the core refuses returns {"success": False, ...};
    an unknown call or a bad argument raises ValueError naming it, and changes nothing.
    allow_files=False makes save_state / load_state fail (sandboxed runs).
    """

    # Every call's name and one-line summary, from the interpreter's call table.
    _summaries = dict(_core.scheduler_calls())
    calls = tuple(_summaries)

    def __init__(self, setup=None, allow_files=True):
        if isinstance(setup, Mapping):
            setup = dict(setup)
        else:
            try:
                setup = path("setup", setup)
            except TypeError:
                raise TypeError(f"setup: expected None, a dict or the path of a JSON/YAML file, got {setup!r}") from None
        self._core = _core._Scheduler(setup, flag("allow_files", allow_files))

    def call(self, name, /, **args):
        """The call `name` with keyword arguments: its result dict."""
        return self._core.call(name, args)

    @property
    def time(self):
        """The simulated clock, in seconds."""
        return self._core.time

    def check_invariants(self):
        """Broken invariants of the core and the serving instances (empty: none)."""
        return self._core.check_invariants()

    def prometheus_text(self):
        """The core's metrics in Prometheus' text format (the schedulemesh_* names)."""
        return self._core.prometheus_text()

    def __getattr__(self, name):
        if name in Scheduler.calls:
            method = functools.partial(self.call, name)
            method.__doc__ = f"{name}(**args): {Scheduler._summaries[name]}"
            return method
        raise AttributeError(f"Scheduler has no call '{name}' (calls: {', '.join(Scheduler.calls)})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(Scheduler.calls))
