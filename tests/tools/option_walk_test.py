#!/usr/bin/env python3
"""Every option of every meshsim command is used or refused.

The options come from each command's --help, so a new option without a case here fails
this test. Each option has one case:
  changes  - the command with it writes something else than without it (a file of the
             run folder, or what it prints);
  refused  - a value that exists but cannot be right (a broken file, a catalog that
             does not load, a combination that does not apply) exits 2 naming the
             option's subject: the command read it;
  unlocks  - a run refused without it is accepted with it;
  base     - every other case of the command uses it (--out: each case reads its outputs).
And every option that takes a value refuses an empty one (CLI11 reads '' as 0).

Usage: option_walk_test.py MESHSIM SOURCE_DIR SHARED_DIR WORK_DIR
"""
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MESHSIM, SOURCE, SHARED, WORK = os.path.abspath(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]).resolve()
SCENARIOS = SOURCE / "configs" / "scenarios"
failures = []
timings = []
counter = itertools.count()


def fresh(name):
    return str(WORK / f"{name}-{next(counter)}")


def run(args, out=None):
    command = [MESHSIM] + [str(a) for a in args] + (["--out", out] if out else [])
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=WORK)
    timings.append((time.monotonic() - started, " ".join(command[1:4])))
    return done


def artifact(done, out, what):
    """What a case compares: files of the run folder, the folder's listing, or stdout."""
    if what == "stdout":
        # Wall-clock figures differ between any two runs.
        return "\n".join(l for l in done.stdout.splitlines() if "wall" not in l)
    if what == "stderr":
        return done.stderr
    if what.startswith("exists:"):
        return Path(what[len("exists:"):]).exists()
    if what == "stdout_lines":
        return len(done.stdout.splitlines())
    if what == "listing":
        return sorted(p.name for p in Path(out).iterdir())
    return [Path(out, name).read_text() if Path(out, name).exists() else None for name in what.split("+")]


# ---------------------------------------------------------------------------- fixtures
shutil.rmtree(WORK, ignore_errors=True)  # every case writes to a folder of its own
WORK.mkdir(parents=True)
empty = WORK / "empty.json"
empty.write_text("")
broken_catalog = WORK / "broken-catalog"
broken_catalog.mkdir(exist_ok=True)
(broken_catalog / "hardware.json").write_text("{broken")
trace = WORK / "trace.csv"
trace2 = WORK / "trace2.csv"
for path, gap, prompt in ((trace, 0.2, 300), (trace2, 0.1, 900)):
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    for i in range(int(2400 / gap)):
        t = i * gap
        lines.append(f"2023-11-16 {18 + int(t // 3600):02d}:{int(t % 3600 // 60):02d}:{t % 60:09.6f},"
                     f"{prompt + (i * 37) % 400},{40 + (i * 13) % 200}")
    path.write_text("\n".join(lines) + "\n")
# A recipe that trains and evaluates in seconds.
recipe = json.loads((SCENARIOS / "rl-train.json").read_text())
recipe["workload"]["generator"] = str((SCENARIOS / recipe["workload"]["generator"]).resolve()) \
    if isinstance(recipe["workload"]["generator"], str) else recipe["workload"]["generator"]
rl = recipe["rl"]
rl.update(tuning_windows=1, episode_s=300, test=[[21600, 21900]], validation=[[18000, 18300]],
          scale_up_delays_s=[10, 60], rate_scales=[1])
rl["ppo"].update(num_envs=2, rollout_steps=8, total_decisions=32, checkpoint_every=1)
fast = WORK / "fast.json"
fast.write_text(json.dumps(recipe))
recipe["rl"]["test"] = [[22000, 22300]]
recipe["rl"]["ppo"]["gamma"] = 0.5
recipe["slo"] = {"ttft_ms": 500, "tbt_ms": 100}
fast2 = WORK / "fast2.json"
fast2.write_text(json.dumps(recipe))
default = json.loads((SCENARIOS / "default.json").read_text())
default["workload"]["generator"] = str((SCENARIOS / default["workload"]["generator"]).resolve())
default["slo"]["ttft_ms"] = 150
strict = WORK / "strict.json"
strict.write_text(json.dumps(default))
grid = WORK / "grid.json"
grid.write_text(json.dumps({"config": str(SCENARIOS / "default.json"), "grid": {"run.until_s": [20, 30]}}))
script = WORK / "script.json"
shutil.copy(SOURCE / "experiments" / "scenarios" / "p01_basic_flow.json", script)
policy = fresh("train-for-policy")
made = run(["train", "--config", fast, "--no-plot", "--quiet", "--max-iterations", "1"], policy)
if made.returncode != 0:
    failures.append(f"the training that makes a policy for eval failed: {made.stderr}")
have_matplotlib = subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0
profile = SHARED / "reference" / "splitwise_perf_model.csv"
reference_rows = SHARED / "reference" / "vllm-h100-measured.csv"
reference = WORK / "reference-1row.csv"
# A closed-loop table (AIConfigurator's layout) of a bundled model, two shapes.
closed_loop = WORK / "closed-loop.csv"
closed_loop.write_text(
    "id,backend,model_path,system,precision,mode,isl,osl,batch_size,tp_size,silicon_ttft_ms,silicon_tpot_ms\n"
    "a,vllm,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,128,4,4,90,10\n"
    "b,vllm,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,128,16,8,110,9\n"
    "c,vllm,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,2048,64,8,4,200,12\n"
    "d,vllm,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,2048,64,8,2,300,16\n")
if reference_rows.exists():
    reference.write_text("".join(reference_rows.read_text().splitlines(True)[:2]))


def changes(args, what, base=None, instead=None):
    """`args` change `what` against the base run (with `instead` in their place)."""
    return ("changes", args, what, (base, instead or []))


def refused(args, says, base=None):
    return ("refused", args, says, base)


def unlocks(args, base_extra, again=False):
    """A run refused without `args` is accepted with them (`again`: the refused run is the
    base run's second time into the same folder)."""
    return ("unlocks", args, (base_extra, again), None)


def instead_of(option, value, base, what):
    """`option value` changes `what` against the base run's own value of it (a flag:
    value None, against the base run without it)."""
    at = base.index(option)
    if value is None:
        return changes([], what, base=base[:at] + base[at + 1:], instead=[option])
    return changes([option, value], what, base=base[:at] + base[at + 2:], instead=base[at:at + 2])


BASE = "base"
# Each tuned family at one value, so that an evaluation takes seconds.
EVAL_BASE = ["--config", fast, "--no-plot", "--kv-targets", "0.7", "--request-targets", "8", "--rate-targets", "1",
             "--token-targets", "1000", "--elastic-capacities", "8", "--oracle-utilisations", "0.8",
             "--multi-metric-scales", "1", "--bound-utilisations", "0.8", "--bound-prices", "1", "--max-static", "6"]
CAPACITY_MODEL_BASE = ["--config", fast, "--stretch", "60", "--stretches", "12", "--validation-stretches", "4",
                       "--least-requests", "1"]
catalog_refused = refused(["--catalog", broken_catalog], "hardware.json")

# Per command: the base arguments (outputs go to a fresh --out where the command takes one),
# then a case per option.
COMMANDS = {
    "replay": (["--until", "30", "--quiet"], True, {
        "--config": changes(["--config", SCENARIOS / "shared-cluster-synthetic.json"], "requests.csv"),
        "--trace": changes(["--trace", trace], "requests.csv"),
        "--trace-format": refused(["--trace", trace, "--trace-format", "mooncake"], "trace.csv"),
        "--out": BASE,
        "--seed": changes(["--seed", "7"], "requests.csv"),
        "--set": changes(["--set", "serving.start_state.0.count=1"], "requests.csv"),
        "--rate-scale": changes(["--rate-scale", "2"], "requests.csv"),
        "--until": changes(["--until", "20"], "requests.csv", base=["--quiet"], instead=["--until", "30"]),
        "--trace-events": changes(["--trace-events", WORK / "events.json"], f"exists:{WORK / 'events.json'}"),
        "--autoscaler": changes(["--autoscaler", "target_tracking"], "timeseries.csv", base=["--until", "900", "--quiet"]),
        "--scaling-log": changes(["--scaling-log"], "stderr",
                                 base=["--until", "900", "--autoscaler", "target_tracking", "--quiet"]),
        "--quiet": changes(["--quiet"], "stdout_lines", base=["--until", "30"]),
        "--catalog": catalog_refused,
        "--metrics-port": refused(["--metrics-port", "70000"], "--metrics-port"),
    }),
    "fit-trace": (["--trace", trace], False, {
        "--trace": changes(["--trace", trace2], "stdout", base=[], instead=["--trace", trace]),
        "--trace-format": refused(["--trace-format", "mooncake"], "trace.csv"),
        "--name": changes(["--name", "other"], "stdout"),
    }),
    "capacity": (["--until", "60", "--no-plot", "--threads", "1"], True, {
        "--config": changes(["--config", strict], "capacity.csv"),
        "--set": changes(["--set", "slo.ttft_ms=150"], "capacity.csv"),
        "--trace": changes(["--trace", trace], "capacity.csv"),
        "--trace-format": refused(["--trace", trace, "--trace-format", "mooncake"], "trace.csv"),
        "--seed": changes(["--seed", "7"], "capacity.csv"),
        "--find": changes(["--find", "rate"], "capacity.csv"),
        "--pool": refused(["--pool", "token"], "--pool"),
        "--target": changes(["--target", "1"], "capacity.csv", base=["--until", "60", "--no-plot", "--rate-scale", "6"]),
        "--rate-scale": changes(["--rate-scale", "4"], "capacity.csv"),
        "--max-instances": changes(["--max-instances", "1"], "capacity.csv",
                                   base=["--until", "60", "--no-plot", "--rate-scale", "4"]),
        "--precision": refused(["--precision", "0.1"], "--precision: applies to --find rate"),
        "--compare-skus": changes(["--compare-skus", "h200-141gb:2,b200-180gb:1"], "listing"),
        "--until": changes(["--until", "30"], "capacity.csv", base=["--no-plot", "--threads", "1"],
                           instead=["--until", "60"]),
        "--warmup": changes(["--warmup", "20"], "capacity.csv"),
        "--threads": refused(["--threads", "1000"], "--threads", base=["--until", "60", "--no-plot"]),
        "--out": BASE,
        "--no-plot": changes(["--no-plot"], "listing", base=["--until", "60"]) if have_matplotlib else BASE,
        "--catalog": catalog_refused,
    }),
    "capacity-model": (CAPACITY_MODEL_BASE, True, {
        "--config": instead_of("--config", fast2, CAPACITY_MODEL_BASE, "capacity_labels.csv"),
        "--set": changes(["--set", "slo.ttft_ms=500"], "capacity_labels.csv"),
        "--seed": changes(["--seed", "3"], "capacity_labels.csv"),
        "--stretches": instead_of("--stretches", "14", CAPACITY_MODEL_BASE, "capacity_labels.csv"),
        "--validation-stretches": instead_of("--validation-stretches", "5", CAPACITY_MODEL_BASE, "capacity_labels.csv"),
        "--stretch": instead_of("--stretch", "90", CAPACITY_MODEL_BASE, "capacity_labels.csv"),
        "--least-requests": instead_of("--least-requests", "1000", CAPACITY_MODEL_BASE, "capacity_model.json"),
        "--features": changes(["--features", "constant"], "capacity_model.json"),
        "--accept": changes(["--accept", "5"], "stdout"),
        "--out": BASE,
        "--catalog": catalog_refused,
    }),
    "models": ([], False, {
        "--config": changes(["--config", SCENARIOS / "default.json"], "stdout"),
        "--set": refused(["--set", "serving.tensor_parallel=8"], "--set requires --config"),
        "--catalog": catalog_refused,
    }),
    "calibrate": (["--profile", profile], False, {
        "--profile": refused(["--profile", empty], "empty.json", base=[]),
        "--reference": refused(["--reference", empty], "empty.json", base=[]),
        "--catalog": catalog_refused,
        "--fit-on": changes(["--fit-on", "1024x128"], "stdout", base=["--reference", closed_loop]),
        "--sku": refused(["--sku", "z100"], "--sku: no SKU or alias 'z100'", base=["--reference", closed_loop]),
    }) if profile.exists() else None,
    "validate": (["--reference", reference], False, {
        "--reference": refused(["--reference", empty], "empty.json", base=[]),
        "--catalog": catalog_refused,
        "--json": changes(["--json"], "stdout"),
        "--seed": changes(["--seed", "9"], "stdout", base=["--reference", reference, "--json"]),
        "--client-timeout": changes(["--client-timeout", "0.5"], "stdout"),
        "--fit-on": changes(["--fit-on", "1024x128"], "stdout", base=["--reference", closed_loop]),
        "--requests-per-client": changes(["--requests-per-client", "3"], "stdout", base=["--reference", closed_loop]),
    }) if reference_rows.exists() else None,
    "scenario": ([script], False, {
        "script": refused([empty], "empty.json", base=[]),
        "--check": BASE,  # its effect, a broken invariant named, is ScenarioCommandTest's and StateFileTest's
        "--metrics": changes(["--metrics", WORK / "scenario.prom"], f"exists:{WORK / 'scenario.prom'}"),
    }),
    "compare-presets": (["--until", "60", "--no-plot", "--threads", "1"], True, {
        "--config": changes(["--config", SCENARIOS / "rlhf-roles.json"], "presets.csv"),
        "--set": changes(["--set", "cluster.batch.arrival_scale=2"], "presets.csv"),
        "--presets": changes(["--presets", "HIGH"], "presets.csv"),
        "--policy": refused(["--policy", empty], "empty.json"),
        "--seed": changes(["--seed", "3"], "presets.csv"),
        "--seeds": changes(["--seeds", "2"], "presets.csv"),
        "--until": changes(["--until", "30"], "presets.csv", base=["--no-plot", "--threads", "1"],
                           instead=["--until", "60"]),
        "--threads": refused(["--threads", "1000"], "--threads", base=["--until", "60", "--no-plot"]),
        "--out": BASE,
        "--no-plot": changes(["--no-plot"], "listing", base=["--until", "60"]) if have_matplotlib else BASE,
    }),
    "train": (["--config", fast, "--no-plot", "--quiet"], True, {
        "--config": changes(["--config", fast2], "learning_curve.csv", base=["--no-plot", "--quiet"],
                            instead=["--config", fast]),
        "--set": changes(["--set", "rl.ppo.gamma=0.5"], "learning_curve.csv"),
        "--trace": changes(["--trace", trace], "learning_curve.csv"),
        "--trace-format": refused(["--trace", trace, "--trace-format", "mooncake"], "trace.csv"),
        "--out": BASE,
        "--seed": changes(["--seed", "3"], "learning_curve.csv"),
        "--total-decisions": changes(["--total-decisions", "64"], "learning_curve.csv"),
        "--threads": refused(["--threads", "1000"], "--threads"),
        "--max-iterations": changes(["--max-iterations", "1"], "learning_curve.csv"),
        "--resume": refused(["--resume"], "--resume"),
        "--quiet": changes(["--quiet"], "stdout_lines", base=["--config", fast, "--no-plot"]),
        "--no-plot": changes(["--no-plot"], "listing", base=["--config", fast, "--quiet"]) if have_matplotlib else BASE,
        "--world-size": refused(["--world-size", "3"], "--world-size 3"),
        "--rank": refused(["--rank", "5"], "--rank"),
        "--store": refused(["--world-size", "2", "--store", "bogus://x"], "--store"),
        "--timeout": refused(["--timeout", "-1"], "--timeout"),
        "--catalog": catalog_refused,
        "--metrics-port": refused(["--metrics-port", "70000"], "--metrics-port"),
    }),
    "eval": (EVAL_BASE, True, {
        "--config": instead_of("--config", fast2, EVAL_BASE, "eval.csv"),
        "--set": changes(["--set", "rl.test=[[22000,22300]]"], "eval.csv"),
        "--policy": changes(["--policy", Path(policy) / "checkpoint"], "eval.csv"),
        "--split": changes(["--split", "validation"], "eval.csv"),
        "--trace": refused(["--trace", empty], "empty.json"),
        "--workload": refused(["--workload", empty], "empty.json"),
        "--catalog": catalog_refused,
        "--trace-format": refused(["--trace", trace, "--trace-format", "mooncake"], "trace.csv"),
        "--out": BASE,
        "--seed": changes(["--seed", "3"], "eval.csv"),
        "--window-start": changes(["--window-start", "21650", "--window", "200"], "eval.csv"),
        "--window": changes(["--window", "100"], "eval.csv", base=EVAL_BASE + ["--window-start", "21650"],
                            instead=["--window", "200"]),
        "--allow-training-overlap": unlocks(["--allow-training-overlap"], ["--window-start", "600", "--window", "300"]),
        "--rate-scale": changes(["--rate-scale", "2"], "eval.csv"),
        "--delays": changes(["--delays", "60"], "eval.csv"),
        "--kv-targets": instead_of("--kv-targets", "0.5", EVAL_BASE, "tuning.csv"),
        "--request-targets": instead_of("--request-targets", "3", EVAL_BASE, "tuning.csv"),
        "--rate-targets": instead_of("--rate-targets", "0.5", EVAL_BASE, "tuning.csv"),
        "--token-targets": instead_of("--token-targets", "500", EVAL_BASE, "tuning.csv"),
        "--elastic-capacities": instead_of("--elastic-capacities", "3", EVAL_BASE, "tuning.csv"),
        "--oracle-utilisations": instead_of("--oracle-utilisations", "0.5", EVAL_BASE, "tuning.csv"),
        "--bound-utilisations": instead_of("--bound-utilisations", "0.5", EVAL_BASE, "eval.csv"),
        "--bound-prices": instead_of("--bound-prices", "3", EVAL_BASE, "eval.csv"),
        "--multi-metric-scales": instead_of("--multi-metric-scales", "0.5", EVAL_BASE, "tuning.csv"),
        "--capacity-model": refused(["--capacity-model", empty], "--capacity-model"),
        "--capacity-targets": refused(["--capacity-targets", "0.5"], "--capacity-targets requires --capacity-model"),
        "--max-static": instead_of("--max-static", "3", EVAL_BASE, "eval.csv"),
        "--no-plot": instead_of("--no-plot", None, EVAL_BASE, "listing") if have_matplotlib else BASE,
    }),
    "sweep": ([grid, "--quiet", "--threads", "1"], True, {
        "grid": refused([empty], "empty.json", base=[]),
        "--set": changes(["--set", "workload.rate_scale=2"], "sweep.csv"),
        "--out": BASE,
        "--threads": refused(["--threads", "1000"], "--threads", base=[grid, "--quiet"]),
        "--resume": unlocks(["--resume"], [], again=True),
        "--quiet": changes(["--quiet"], "stdout_lines", base=[grid, "--threads", "1"]),
        "--catalog": catalog_refused,
        "--metrics-port": refused(["--metrics-port", "70000"], "--metrics-port"),
    }),
}


def options_of(command):
    """The options and positionals --help lists: (name, takes a value)."""
    text = subprocess.run([MESHSIM, command, "--help"], capture_output=True, text=True).stdout
    found = []
    section = None
    for line in text.splitlines():
        if re.match(r"^(POSITIONALS|Positionals|OPTIONS|Options)", line):
            section = "positional" if line.lower().startswith("positional") else "option"
            continue
        # "--until FLOAT  ...": a value's type follows the name after one space; a flag's
        # description after several.
        m = re.match(r"^\s+(?:-\w,)?(--[\w-]+)( [A-Z])?", line)
        if m and section == "option":
            found.append((m.group(1), bool(m.group(2))))
            continue
        m = re.match(r"^\s+([a-z]+) [A-Z]", line)
        if m and section == "positional":
            found.append((m.group(1), True))
    return found


base_runs = {}  # the run without a case's option, once per command and arguments
base_lock = threading.Lock()


def base_artifact(command, args, has_out, what):
    """What the run without the option gives (its failed run, if it failed), run once."""
    with base_lock:
        slot = base_runs.setdefault((command, args), {"lock": threading.Lock()})
    with slot["lock"]:
        if "done" not in slot:
            slot["out"] = fresh(command) if has_out else None
            slot["done"] = run([command] + list(args), slot["out"])
    done = slot["done"]
    if done.returncode != 0:
        return done
    if what.startswith("exists:"):
        return False  # the base runs never name the file a case's option writes
    return artifact(done, slot["out"], what)


def check(command, option, case, base, has_out):
    kind, args, detail, case_base = case
    instead = []
    if kind == "changes":
        case_base, instead = case_base
    base_args = case_base if case_base is not None else base
    where = f"meshsim {command} {option}"
    given_twice = {a for a in args if str(a).startswith("--")} & {a for a in base_args if str(a).startswith("--")}
    if given_twice:
        failures.append(f"{where}: the case gives {given_twice} twice (CLI11 refuses that, proving nothing)")
        return
    out = fresh(command) if has_out else None
    if kind == "refused":
        done = run([command] + [a for a in base_args] + args, out)
        if done.returncode != 2 or detail not in done.stderr:
            failures.append(f"{where}: expected exit 2 naming '{detail}', got {done.returncode}: {done.stderr[-400:]}")
        return
    if kind == "unlocks":
        extra, again = detail
        if again:
            first = run([command] + base + extra, out)
            if first.returncode != 0:
                failures.append(f"{where}: the first run failed: {first.stderr[-300:]}")
        before = run([command] + base + extra, out)
        after = run([command] + base + extra + args, out if again else fresh(command) if has_out else None)
        if before.returncode == 0 or after.returncode != 0:
            failures.append(f"{where}: expected refused without it and accepted with it, got {before.returncode} "
                            f"then {after.returncode}: {after.stderr[-300:]}")
        return
    before = base_artifact(command, tuple(base_args + instead), has_out, detail)
    out2 = fresh(command) if has_out else None
    with_it = run([command] + base_args + args, out2)
    if isinstance(before, subprocess.CompletedProcess) or with_it.returncode != 0:
        failures.append(f"{where}: expected both runs to exit 0, got {getattr(before, 'returncode', 0)} and "
                        f"{with_it.returncode}: {getattr(before, 'stderr', '')[-300:]} {with_it.stderr[-300:]}")
        return
    if before == artifact(with_it, out2, detail):
        failures.append(f"{where}: {args} changed nothing in {detail}")


commands = subprocess.run([MESHSIM, "--help"], capture_output=True, text=True).stdout
listed = re.findall(r"^\s{2}([a-z-]+)\s", commands.split("Subcommands:")[-1], re.M)
jobs = []  # each case is independent: two at a time (the runs are mostly single-threaded)


def refuses_empty(command, option):
    done = run([command, option, ""])
    if done.returncode != 2:
        failures.append(f"meshsim {command} {option} '': expected exit 2 (an empty value), got {done.returncode}: "
                        f"{done.stderr[-200:]}")


for command in listed:
    help_run = subprocess.run([MESHSIM, command, "--help"], capture_output=True, text=True)
    if help_run.returncode != 0 and "LibTorch" in help_run.stdout + help_run.stderr:
        print(f"skip {command}: built without LibTorch")
        continue
    if command not in COMMANDS:
        failures.append(f"meshsim {command}: no cases in option_walk_test.py")
        continue
    if COMMANDS[command] is None:
        print(f"skip {command}: its input is in ../shared/reference, absent here")
        continue
    base, has_out, cases = COMMANDS[command]
    options = options_of(command)
    for option, takes_value in options:
        if option == "--help":
            continue
        if option not in cases:
            failures.append(f"meshsim {command} {option}: no case in option_walk_test.py (show it is used or refused)")
            continue
        if takes_value:
            jobs.append((refuses_empty, command, option))
        if cases[option] != BASE:
            jobs.append((check, command, option, cases[option], base, has_out))
    for option in cases:
        if option not in [o for o, _ in options]:
            failures.append(f"meshsim {command} {option}: a case for an option --help does not list")
    print(f"{command}: {len(options) - 1} options")

with ThreadPoolExecutor(max_workers=2) as pool:
    for done in [pool.submit(job[0], *job[1:]) for job in jobs]:
        done.result()
print(f"{len(jobs)} cases, {len(timings)} runs, {sum(t for t, _ in timings):.0f} s; the slowest:")
for seconds, what in sorted(timings, reverse=True)[:5]:
    print(f"  {seconds:6.1f} s  meshsim {what} ...")
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
