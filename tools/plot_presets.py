#!/usr/bin/python3
"""Plots the presets.csv of `meshsim compare-presets` as one PNG of four panels.

    tools/plot_presets.py PRESETS_CSV [--out PNG]

Panels: serving SLO attainment, batch GPU-hours kept (goodput), GPU-hours lost to preemption, and
preemptions by reason, one bar per policy. Uses Debian's python3-matplotlib.
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import csv
import math
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="PNG path (default: presets.png beside the CSV)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_presets.py: python3-matplotlib is not installed", file=sys.stderr)
        return 77
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"plot_presets.py: {e}", file=sys.stderr)
        return 2
    if not rows or "policy" not in rows[0]:
        print(f"plot_presets.py: {args.csv} is not a presets.csv", file=sys.stderr)
        return 2
    names = [r["policy"] for r in rows]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    panels = [
        ("serving SLO attainment (%)", [100 * float(r["slo_attainment"]) for r in rows]),
        ("batch GPU-hours kept (useful)", [float(r["useful_gpu_hours"]) for r in rows]),
        ("GPU-hours lost to preemption", [float(r["lost_gpu_hours"]) for r in rows]),
    ]
    for ax, (title, values) in zip(axes, panels):
        bars = ax.bar(names, values, color="tab:blue")
        # The value on each bar, rounded down (an SLO short of 100% never reads 100.00).
        ax.bar_label(bars, labels=[f"{math.floor(v * 100) / 100:.2f}" for v in values], fontsize="small")
        ax.margins(y=0.12)
        ax.set_title(title)
    bottom = [0.0] * len(rows)
    for reason, color in (("same_pool", "tab:orange"), ("cross_pool", "tab:red"), ("label", "tab:purple")):
        values = [float(r[f"{reason}_preemptions"]) for r in rows]
        axes[3].bar(names, values, bottom=bottom, color=color, label=reason.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values)]
    for x, total in enumerate(bottom):
        axes[3].annotate(f"{total:.0f}", (x, total), ha="center", va="bottom", fontsize="small")
    axes[3].margins(y=0.12)
    axes[3].set_title("preemptions by reason")
    axes[3].legend(fontsize="small")
    fig.tight_layout()
    out = args.out or os.path.join(os.path.dirname(args.csv) or ".", "presets.png")
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
