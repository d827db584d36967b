"""meshsim.replay: a scenario replayed in memory, as `meshsim replay` runs it."""
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from meshsim import _core
from meshsim.arguments import flag, merged_overrides, path


@dataclass(frozen=True)
class Replay:
    """What `meshsim replay` writes to a run folder, in memory.

    summary: summary.json as a dict (headline figures, then the resolved config);
    requests, timeseries: requests.csv and timeseries.csv, the same columns in the same
    order, as numpy structured arrays or pandas DataFrames. Where the CSV leaves a cell
    empty, a seconds column holds NaN and an instance id -1.
    """

    summary: dict
    requests: Any
    timeseries: Any


def replay(config=None, trace=None, *, frames=None, overrides=None, **kw_overrides):
    """Replays a scenario and returns a Replay.

    config: a scenario file (None: the bundled default, configs/scenarios/default.json);
    trace: a trace file replacing its workload (azure .csv or mooncake .jsonl, as
    meshsim replay --trace); overrides: config keys, "a.b" written a__b
    (workload__rate_scale=2, seed=7) or given as overrides={"workload.rate_scale": 2};
    frames: True for pandas DataFrames, False for numpy structured arrays, None for
    DataFrames when pandas is installed. The simulation runs with the GIL released, so
    replays in threads run in parallel. A bad config raises ValueError naming the file
    and key; the run's warnings are issued as RuntimeWarning.
    """
    overrides = merged_overrides(overrides, kw_overrides)
    pandas = _pandas(None if frames is None else flag("frames", frames))
    summary, requests, timeseries, messages = _core.replay(path("config", config), path("trace", trace), overrides)
    for message in messages:
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return Replay(summary, _table(requests, pandas), _table(timeseries, pandas))


def _pandas(frames):
    if frames is False:
        return None
    try:
        import pandas
    except ImportError:
        if frames:
            raise ImportError("frames=True needs pandas (Debian: python3-pandas)") from None
        return None
    return pandas


def _table(columns, pandas):
    # A class of service comes as a list of names (requests.csv's "class" column).
    columns = {name: np.asarray(values) for name, values in columns.items()}
    if pandas is not None:
        return pandas.DataFrame(columns)
    rows = len(next(iter(columns.values())))
    table = np.empty(rows, dtype=[(name, values.dtype) for name, values in columns.items()])
    for name, values in columns.items():
        table[name] = values
    return table
