#!/usr/bin/python3
"""Plots a `meshsim eval` folder (eval.csv, instances.csv) as one PNG, a row per scale-up delay.

    tools/plot_eval.py EVAL_DIR [--out PNG]

Left: instances over time of the table's policies. Right: GPU-hours against SLO attainment
of every run: the static sweep, the target-tracking front, elastic, the oracle and the policy.
Uses Debian's python3-matplotlib. Exit codes: 0 done, 2 bad input, 77 matplotlib missing.
"""
import argparse
import csv
import os
import sys


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--out", help="PNG path (default: eval.png in the folder)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_eval.py: python3-matplotlib is not installed", file=sys.stderr)
        return 77
    try:
        runs = read(os.path.join(args.dir, "eval.csv"))
        series = read(os.path.join(args.dir, "instances.csv"))
    except OSError as e:
        print(f"plot_eval.py: {e}", file=sys.stderr)
        return 2
    if not runs or "gpu_hours" not in runs[0]:
        print(f"plot_eval.py: {args.dir} holds no eval.csv rows", file=sys.stderr)
        return 2
    delays = sorted({r["delay_s"] for r in runs}, key=float)
    fig, axes = plt.subplots(len(delays), 2, figsize=(13, 3.8 * len(delays)), squeeze=False)
    for row, delay in enumerate(delays):
        ax = axes[row][0]
        for policy in dict.fromkeys(s["policy"] for s in series if s["delay_s"] == delay):
            pts = [s for s in series if s["delay_s"] == delay and s["policy"] == policy]
            ax.plot([float(p["time_s"]) / 60 for p in pts], [float(p["instances"]) for p in pts], label=policy)
        ax.set_title(f"instances over time (scale-up delay {delay} s)")
        ax.set_xlabel("minutes")
        ax.legend(fontsize=8)
        ax = axes[row][1]
        styles = {"static": ("o", "static sweep"), "target_tracking_kv": ("s", "target tracking (KV)"),
                  "target_tracking_requests": ("^", "target tracking (requests)"), "elastic": ("D", "elastic"),
                  "oracle": ("*", "oracle"), "ppo": ("P", "PPO policy")}
        for policy, (marker, label) in styles.items():
            pts = [r for r in runs if r["delay_s"] == delay and r["policy"] == policy]
            if not pts:
                continue
            ax.plot([float(p["gpu_hours"]) for p in pts], [100 * float(p["slo_attainment"]) for p in pts],
                    marker=marker, linestyle="-" if len(pts) > 1 else "", label=label)
        ax.set_xlabel("GPU-hours")
        ax.set_ylabel("SLO attainment (%)")
        ax.set_title("cost against SLO attainment")
        ax.legend(fontsize=8)
        for a in axes[row]:
            a.grid(alpha=0.3)
    fig.tight_layout()
    out = args.out or os.path.join(args.dir, "eval.png")
    fig.savefig(out, dpi=100)
    print(f"plot_eval.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
