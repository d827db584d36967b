"""meshsim.evaluate: a policy written in Python judged by meshsim eval's protocol."""
import csv
import os
import shutil
import tempfile
from dataclasses import dataclass

from meshsim import _core
from meshsim.arguments import checked_action, exact_int, flag, mapping, path, real, reals, text


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


def evaluate(policy, config=None, out="meshsim-eval", delays=None, name="python", split=None, window_start_s=None,
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
    An exception raised by the policy (or an action env.step would refuse) is raised here
    once the run ends, and nothing is written to `out`. Arguments are taken as they are or
    refused naming them: delays='10' is not [1, 0], max_static=1.9 not 1.
    """
    if not callable(policy):
        raise TypeError(f"policy: expected a callable from an observation to an action, got {policy!r}")
    config, out, quiet = path("config", config), path("out", out, required=True), flag("quiet", quiet)
    name, split = text("name", name), None if split is None else text("split", split)
    delays = [] if delays is None else reals("delays", delays, 0)
    window_start_s = None if window_start_s is None else real("window_start_s", window_start_s, 0)
    window_s = None if window_s is None else real("window_s", window_s, 0)
    rate_scale, max_static = real("rate_scale", rate_scale, 0), exact_int("max_static", max_static, 1, 2**32 - 1)
    grids = _checked_grids(grids)
    # The recipe's action space, by the environment env.step acts on: the same check.
    space = _core._ScalingEnv(config, None, {})
    size, choices = space.action_size, space.discrete_choices
    space.close()

    def checked_policy(observation):
        return checked_action(policy(observation), size, choices)

    # Played into a folder beside `out`, moved into it only when the whole run held.
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".meshsim-evaluate-", dir=parent)
    try:
        text_out, _notes = _core.evaluate(checked_policy, config, name, staging, delays, split, window_start_s,
                                          window_s, rate_scale, max_static, grids)
        text_out = text_out.replace(staging, out)  # the files it names are moved there
        os.makedirs(out, exist_ok=True)
        for entry in os.listdir(staging):
            target = os.path.join(out, entry)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            os.replace(os.path.join(staging, entry), target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not quiet:
        print(text_out, end="")
    return Evaluation(text_out, _rows(os.path.join(out, "verdicts.csv")), _rows(os.path.join(out, "eval.csv")), out)


def _checked_grids(grids):
    """The baseline grids by name, each a list of numbers (bound_prices a count,
    capacity_model a path); the names themselves are checked by the native run."""
    checked = {}
    for key, values in mapping("grids", grids).items():
        key = text("grids key", key)
        if key == "bound_prices":
            checked[key] = exact_int("grids['bound_prices']", values, 0, 2**32 - 1)
        elif key == "capacity_model":
            checked[key] = path("grids['capacity_model']", values, required=True)
        else:
            checked[key] = reals(f"grids[{key!r}]", values)
    return checked
