#!/usr/bin/env python3
"""Train the RL recipe with several seeds and judge each policy against every baseline.

For each seed: `meshsim train` (skipped when the seed's run already finished), then
`meshsim eval` on each evaluation of --evals at every delay of --delays. From each
eval.csv it takes, per delay, the policy's row and the cheapest baseline (any static size,
elastic or target-tracking target; the oracle is a bound, not a baseline) whose SLO
attainment is at least the policy's, and checks the issue's goal: at least 10% fewer
GPU-hours than that baseline, with no more scaling actions per hour than the table's
target tracking. Writes results.csv and results.md in --out and prints the table.

  experiments/rl/seeds.py --out rl-seeds [--seeds 1,2,3] [--config FILE] [--threads N]

Two seeds side by side on a 2-core machine: one process per seed with --threads 1 and the
same --out, then --eval-only over all seeds for the whole table.

The default evaluations: the recipe's held-out last hour, and the default scenario's
bursty workload (another generator) at 4x its rate, which the recipe's load spans.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

DEFAULT_EVALS = [
    ("held-out hour", ["--window-start", "18000", "--window", "3600"]),
    ("bursty workload 4x", ["--config", os.path.join(ROOT, "configs/scenarios/default.json"),
                            "--rate-scale", "4", "--window", "3600"]),
]
GOAL_SAVING = 0.10


def finished(run_dir):
    """Whether a train run's last checkpoint holds its whole budget."""
    curve = os.path.join(run_dir, "learning_curve.csv")
    if not os.path.exists(os.path.join(run_dir, "checkpoint", "state.json")) or not os.path.exists(curve):
        return False
    with open(os.path.join(run_dir, "checkpoint", "state.json")) as f:
        state = json.load(f)
    return state["iteration"] == state["iterations"]


def judge(rows, delay):
    """The policy's row at `delay`, the cheapest baseline at its SLO or better, and the table's target tracking."""
    at = [r for r in rows if r["delay_s"] == delay]
    ppo = next(r for r in at if r["policy"] == "ppo")
    slo = float(ppo["slo_attainment"])
    rivals = [r for r in at if r["policy"] not in ("ppo", "oracle") and float(r["slo_attainment"]) >= slo]
    rival = min(rivals, key=lambda r: float(r["gpu_hours"])) if rivals else None
    tracking = next((r for r in at if r["policy"].startswith("target_tracking") and r["in_table"] == "1"), None)
    oracle = next(r for r in at if r["policy"] == "oracle")
    return ppo, rival, tracking, oracle


def name(row):
    return row["policy"] + (" " + row["parameter"] if row["parameter"] else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for the runs, evals and results")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--config", default=os.path.join(ROOT, "configs/scenarios/rl-train.json"))
    parser.add_argument("--delays", default="10,60,180")
    parser.add_argument("--meshsim", default=os.path.join(ROOT, "build/tools/meshsim"))
    parser.add_argument("--total-decisions", help="override the recipe's budget (quick looks)")
    parser.add_argument("--threads", help="environment threads per training run (default: the recipe's)")
    parser.add_argument("--eval-only", action="store_true",
                        help="evaluate each seed's latest checkpoint as it is, without training")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    results = []
    for seed in args.seeds.split(","):
        run_dir = os.path.join(args.out, f"seed-{seed}")
        if not args.eval_only and not finished(run_dir):
            cmd = [args.meshsim, "train", "--config", args.config, "--out", run_dir, "--seed", seed, "--quiet"]
            if os.path.exists(os.path.join(run_dir, "checkpoint")):
                cmd.append("--resume")
            if args.total_decisions:
                cmd += ["--total-decisions", args.total_decisions]
            if args.threads:
                cmd += ["--threads", args.threads]
            subprocess.run(cmd, check=True)
        for label, extra in DEFAULT_EVALS:
            eval_dir = os.path.join(run_dir, "eval-" + label.replace(" ", "-"))
            cmd = [args.meshsim, "eval", "--policy", os.path.join(run_dir, "checkpoint"), "--out", eval_dir,
                   "--delays", args.delays, "--no-plot"]
            if "--config" not in extra:
                cmd += ["--config", args.config]
            subprocess.run(cmd + extra, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(eval_dir, "eval.csv")) as f:
                rows = list(csv.DictReader(f))
            for delay in args.delays.split(","):
                ppo, rival, tracking, oracle = judge(rows, delay)
                saving = 1 - float(ppo["gpu_hours"]) / float(rival["gpu_hours"]) if rival else None
                calm = tracking is None or float(ppo["actions_per_hour"]) <= float(tracking["actions_per_hour"])
                results.append({
                    "seed": seed, "evaluation": label, "delay_s": delay,
                    "ppo_slo": ppo["slo_attainment"], "ppo_gpu_hours": ppo["gpu_hours"],
                    "ppo_actions_per_hour": ppo["actions_per_hour"],
                    "rival": name(rival) if rival else "none", "rival_slo": rival["slo_attainment"] if rival else "",
                    "rival_gpu_hours": rival["gpu_hours"] if rival else "",
                    "saving": f"{saving:.4f}" if saving is not None else "",
                    "tracking": name(tracking) if tracking else "",
                    "tracking_actions_per_hour": tracking["actions_per_hour"] if tracking else "",
                    "oracle_slo": oracle["slo_attainment"], "oracle_gpu_hours": oracle["gpu_hours"],
                    "goal_met": int(saving is not None and saving >= GOAL_SAVING and calm),
                })

    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(results[0].keys()))
        writer.writeheader()
        writer.writerows(results)
    lines = ["| seed | evaluation | delay | ppo SLO | ppo GPU-h | ppo act/h | cheapest baseline at >= its SLO "
             "| its SLO | its GPU-h | saving | TT act/h | oracle SLO / GPU-h | goal |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    pct = lambda x: f"{100 * float(x):.2f}%" if x != "" else "-"
    num = lambda x: f"{float(x):.2f}" if x != "" else "-"
    for r in results:
        cells = [r["seed"], r["evaluation"], r["delay_s"] + " s", pct(r["ppo_slo"]), num(r["ppo_gpu_hours"]),
                 f"{float(r['ppo_actions_per_hour']):.0f}", r["rival"], pct(r["rival_slo"]),
                 num(r["rival_gpu_hours"]), pct(r["saving"]), r["tracking_actions_per_hour"] or "-",
                 f"{pct(r['oracle_slo'])} / {num(r['oracle_gpu_hours'])}", "met" if r["goal_met"] else "not met"]
        lines.append("| " + " | ".join(cells) + " |")
    met = sum(r["goal_met"] for r in results)
    lines.append("")
    lines.append(f"goal met in {met} of {len(results)} (seed, evaluation, delay) cells")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
