#!/usr/bin/env python3
"""Train a recipe with several seeds and judge the policies by the evaluation protocol.

For each seed: `meshsim train` (skipped when the seed's run already finished; the run keeps
its best checkpoint on the recipe's validation spans as best/). Then one `meshsim eval` per
evaluation with every seed's best policy, so all are judged against the same baselines,
each tuned on the recipe's training windows (README, "Evaluating a policy"):

  test                the recipe's test spans (held out from training and validation)
  bursty default 4x   the default scenario's workload at 4x its rate, a generator the
                      policies never trained on (--no-bursty leaves it out)

A (seed, evaluation, window, delay) cell meets the goals when the policy uses at least 10%
fewer GPU-hours than the cheapest tuned baseline with at least its SLO attainment (than the
tuned baseline closest to it, when none reaches it), and, separately, at least 10% fewer than the
hindsight static front interpolated at its SLO attainment; the GPU-hour gap between the
best tuned target tracking and the oracle that it closes is reported beside. Writes
results.csv (a row per cell), baselines.csv (the tuned baselines' rows) and results.md
(per evaluation and delay: mean and spread over seeds, goals met) in --out.

  experiments/rl/seeds.py --out rl-seeds [--seeds 1,2,3,4,5] [--config RECIPE] [--threads N]

Several seeds side by side on a 2-core machine: one process per seed with --threads 1 and
the same --out (--train-only), then --eval-only over all seeds for the table.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GOAL_SAVING = 0.10
GOAL_GAP = 0.50


def finished(run_dir):
    """Whether a train run's last checkpoint holds its whole budget."""
    state_path = os.path.join(run_dir, "checkpoint", "state.json")
    if not os.path.exists(state_path) or not os.path.exists(os.path.join(run_dir, "learning_curve.csv")):
        return False
    with open(state_path) as f:
        state = json.load(f)
    return state["iteration"] == state["iterations"]


def policy_of(run_dir):
    """The run's best checkpoint on validation, else its last one."""
    best = os.path.join(run_dir, "best")
    return best if os.path.exists(os.path.join(best, "state.json")) else os.path.join(run_dir, "checkpoint")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def spread(values, unit=""):
    """'mean ± std' of a list of numbers ('-' when empty)."""
    if not values:
        return "-"
    mean = statistics.fmean(values)
    return f"{mean:.2f}{unit}" if len(values) == 1 else f"{mean:.2f} ± {statistics.stdev(values):.2f}{unit}"


def cells_of(eval_dir, evaluation, seed_of):
    """One result row per (policy, window, delay) of an eval folder."""
    plays = read_csv(os.path.join(eval_dir, "eval.csv"))
    cells = []
    for v in read_csv(os.path.join(eval_dir, "verdicts.csv")):
        tuned = [p for p in plays if p["window"] == v["window"] and p["delay_s"] == v["delay_s"] and p["role"] == "tuned"]
        gpu = float(v["gpu_hours"])
        if v["rival"]:
            rival, rival_gpu = v["rival"], float(v["rival_gpu_hours"])
        else:  # above every tuned baseline's SLO attainment: against the closest to it
            best = max(tuned, key=lambda p: (float(p["slo_attainment"]), -float(p["gpu_hours"])))
            rival = f"{best['policy']} {best['parameter']} (highest SLO, below the policy's)".replace("  ", " ")
            rival_gpu = float(best["gpu_hours"])
        saving = 1 - gpu / rival_gpu
        front = float(v["saving_vs_front"]) if v["saving_vs_front"] else None
        gap = float(v["gap_closed"]) if v["gap_closed"] else None
        cells.append({
            "seed": seed_of[v["policy"]], "evaluation": evaluation, "window": v["window"], "delay_s": v["delay_s"],
            "slo": float(v["slo_attainment"]), "gpu_hours": gpu, "actions_per_hour": float(v["actions_per_hour"]),
            "rival": rival, "rival_gpu_hours": rival_gpu,
            "saving_vs_tuned": saving, "saving_vs_front": front, "gap_closed": gap,
            "tracking": v["tracking"], "oracle_gpu_hours": float(v["oracle_gpu_hours"]),
            "goal_tuned": int(saving >= GOAL_SAVING), "goal_front": int(front is not None and front >= GOAL_SAVING),
            "goal_gap": int(gap is not None and gap >= GOAL_GAP),
        })
    baselines = [dict(p, evaluation=evaluation) for p in plays if p["role"] in ("tuned", "oracle")]
    return cells, baselines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for the runs, evaluations and results")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--config", default=os.path.join(ROOT, "configs/scenarios/rl-train.json"), help="the recipe")
    parser.add_argument("--delays", default="10,60,180")
    parser.add_argument("--meshsim", default=os.path.join(ROOT, "build/tools/meshsim"))
    parser.add_argument("--total-decisions", help="override the recipe's budget (quick looks)")
    parser.add_argument("--threads", help="environment threads per training run (default: the recipe's)")
    parser.add_argument("--no-bursty", action="store_true", help="leave out the bursty default workload")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--train-only", action="store_true", help="train (or resume) the seeds, evaluate nothing")
    group.add_argument("--eval-only", action="store_true", help="evaluate each seed's policy as it is")
    group.add_argument("--report-only", action="store_true", help="tabulate the evaluations already in --out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    seeds = args.seeds.split(",")

    for seed in seeds:
        run_dir = os.path.join(args.out, f"seed-{seed}")
        if args.eval_only or args.report_only or finished(run_dir):
            continue
        cmd = [args.meshsim, "train", "--config", args.config, "--out", run_dir, "--seed", seed, "--quiet", "--no-plot"]
        if os.path.exists(os.path.join(run_dir, "checkpoint")):
            cmd.append("--resume")
        if args.total_decisions:
            cmd += ["--total-decisions", args.total_decisions]
        if args.threads:
            cmd += ["--threads", args.threads]
        subprocess.run(cmd, check=True)
    if args.train_only:
        return

    evaluations = [("test", [])]
    if not args.no_bursty:
        evaluations.append(("bursty default 4x", ["--workload", os.path.join(ROOT, "configs/scenarios/default.json"),
                                                  "--rate-scale", "4", "--window", "3600"]))
    policies = []
    seed_of = {}
    for seed in seeds:
        policies += ["--policy", policy_of(os.path.join(args.out, f"seed-{seed}"))]
        seed_of["ppo" if len(seeds) == 1 else f"ppo:seed-{seed}"] = seed
    cells, baselines = [], []
    for label, extra in evaluations:
        eval_dir = os.path.join(args.out, "eval-" + label.replace(" ", "-"))
        cmd = [args.meshsim, "eval", "--config", args.config, "--out", eval_dir, "--delays", args.delays, "--no-plot"]
        if not args.report_only:
            subprocess.run(cmd + policies + extra, check=True, stdout=subprocess.DEVNULL)
        more_cells, more_baselines = cells_of(eval_dir, label, seed_of)
        cells += more_cells
        baselines += more_baselines

    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(cells[0].keys()))
        writer.writeheader()
        writer.writerows(cells)
    with open(os.path.join(args.out, "baselines.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(baselines[0].keys()))
        writer.writeheader()
        writer.writerows(baselines)

    lines = [f"{len(seeds)} seeds; mean ± standard deviation over seeds (savings are 1 - policy / other GPU-hours)", "",
             "| evaluation | window | delay | ppo SLO | ppo GPU-h | saving vs cheapest tuned at ≥ its SLO "
             "| saving vs hindsight static front | gap closed to the oracle | cells ≥ 10% vs tuned | cells ≥ 10% vs front |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    groups = {}
    for c in cells:
        groups.setdefault((c["evaluation"], c["window"], c["delay_s"]), []).append(c)
    for (evaluation, window, delay), group_cells in groups.items():
        pick = lambda key: [c[key] for c in group_cells if c[key] is not None]
        percents = lambda key: spread([100 * x for x in pick(key)], "%")
        lines.append("| " + " | ".join([
            evaluation, window, f"{delay} s", percents("slo"), spread(pick("gpu_hours")),
            percents("saving_vs_tuned"), percents("saving_vs_front"), percents("gap_closed"),
            f"{sum(c['goal_tuned'] for c in group_cells)} of {len(group_cells)}",
            f"{sum(c['goal_front'] for c in group_cells)} of {len(group_cells)}"]) + " |")
    lines += ["", "Tuned baselines (parameters chosen on the training windows) and the oracle:", "",
              "| evaluation | window | delay | policy | parameter | SLO | GPU-h | actions/h |", "|---|---|---|---|---|---|---|---|"]
    for b in baselines:
        lines.append(f"| {b['evaluation']} | {b['window']} | {b['delay_s']} s | {b['policy']} | {b['parameter']} | "
                     f"{100 * float(b['slo_attainment']):.2f}% | {float(b['gpu_hours']):.2f} | "
                     f"{float(b['actions_per_hour']):.1f} |")
    tuned_met = sum(c["goal_tuned"] for c in cells)
    front_met = sum(c["goal_front"] for c in cells)
    lines += ["", f"≥ 10% fewer GPU-hours than the cheapest tuned baseline at its SLO or better: {tuned_met} of "
                  f"{len(cells)} (seed, evaluation, window, delay) cells (goal: 80%)",
              f"≥ 10% fewer than the hindsight static front at equal SLO: {front_met} of {len(cells)} (goal: half)"]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
