#!/usr/bin/python3
"""Plots the learning_curve.csv of `meshsim train` as one PNG of four panels.

    tools/plot_learning_curve.py LEARNING_CURVE_CSV [--out PNG]

Panels against decisions trained: mean reward per decision, SLO attainment, mean
instances per environment, and the PPO diagnostics (approximate KL, clip fraction,
explained variance). Uses Debian's python3-matplotlib.
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import csv
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="PNG path (default: learning_curve.png beside the CSV)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_learning_curve.py: python3-matplotlib is not installed", file=sys.stderr)
        return 77
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"plot_learning_curve.py: {e}", file=sys.stderr)
        return 2
    if not rows or "decisions" not in rows[0]:
        print(f"plot_learning_curve.py: {args.csv} is not a learning_curve.csv (or has no rows)", file=sys.stderr)
        return 2
    x = [int(r["decisions"]) for r in rows]
    col = lambda name: [float(r[name]) for r in rows]
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    axes[0].plot(x, col("mean_reward"))
    axes[0].set_title("mean reward per decision")
    axes[1].plot(x, [100 * v for v in col("slo_attainment")])
    axes[1].set_title("SLO attainment (%)")
    axes[2].plot(x, col("mean_instances"))
    axes[2].set_title("instances (mean per environment)")
    for name in ("approx_kl", "clip_fraction", "explained_variance"):
        axes[3].plot(x, col(name), label=name)
    axes[3].set_title("PPO diagnostics")
    axes[3].legend(fontsize=8)
    for ax in axes:
        ax.set_xlabel("decisions trained")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    out = args.out or os.path.join(os.path.dirname(args.csv) or ".", "learning_curve.png")
    fig.savefig(out, dpi=110)
    print(f"plot_learning_curve.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
