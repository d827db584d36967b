"""meshsim.evaluate: a policy written in Python judged by meshsim eval's protocol."""
import csv
import os
from dataclasses import dataclass

from meshsim import _core


@dataclass(frozen=True)
class Evaluation:
    """What meshsim eval prints and writes, for a Python policy.

    text: the printed tables and verdicts; verdicts: verdicts.csv's rows (one per window
    and delay: the policy's SLO and GPU-hours, its cost against the cheapest tuned baseline
    meeting the target, the fronts at its SLO, the gap to the bound closed); plays:
    eval.csv's rows (every play, with its role); out: the folder holding both.
    """
    text: str
    verdicts: list
    plays: list
    out: str


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def evaluate(policy, config=None, out="meshsim-eval", delays=None, name="python", split="test", window_start_s=None,
             window_s=None, rate_scale=1.0, max_static=32, grids=None, quiet=False):
    """Judges `policy` as `meshsim eval --policy` judges a checkpoint, by the same C++ run.

    policy: a callable from one observation (float32 array) to one action (array-like of
    the environment's action size), deterministic for reproducible figures; called from
    one thread at a time while windows play on native threads.
    config: the recipe (None: configs/scenarios/rl-train.json), the scenario whose
    environment the policy acts in; out: the folder for tuning.csv, eval.csv,
    verdicts.csv and instances.csv; delays: scale-up delays (None: every one the recipe
    trains at); split, window_start_s, window_s, rate_scale, max_static: as meshsim eval's
    options; grids: baseline grids by name ({"rate_targets": [2, 4]}, the names of
    meshsim eval's --*-targets, --elastic-capacities, --oracle-utilisations,
    --bound-utilisations and --multi-metric-scales options with '_' for '-',
    "bound_prices": a count, and "capacity_model": a capacity model file, with which
    capacity-units target tracking is tuned over "capacity_targets" and judged beside the
    policy); quiet: do not print the tables.
    An exception raised by the policy is raised here once the run ends.
    """
    text, _notes = _core.evaluate(policy, config, name, os.fspath(out), [float(d) for d in (delays or [])], split,
                                  window_start_s, window_s, float(rate_scale), int(max_static), {k: (os.fspath(v) if k == "capacity_model" else v) for k, v in (grids or {}).items()})
    if not quiet:
        print(text, end="")
    return Evaluation(text, _rows(os.path.join(out, "verdicts.csv")), _rows(os.path.join(out, "eval.csv")),
                      os.fspath(out))
