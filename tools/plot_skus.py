#!/usr/bin/python3
"""Plots the compare.csv of `meshsim capacity --compare-skus` as one PNG of two panels.

    tools/plot_skus.py COMPARE_CSV [--out PNG]

Left: what each SKU (at its TP degree) costs an hour for the GPUs its fewest instances
meeting the SLO target hold (their share of the servers' price), the cheapest in green.
Right: how many GPUs that is. A SKU that met the target within the search's limit has no bar.
Uses Debian's python3-matplotlib.
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import sys

from plot_setup import pyplot, read_csv


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="PNG path (default: compare.png beside the CSV)")
    args = parser.parse_args()
    plt = pyplot("plot_skus.py")
    if plt is None:
        return 77
    try:
        rows = read_csv(args.csv)
    except OSError as e:
        print(f"plot_skus.py: {e}", file=sys.stderr)
        return 2
    if not rows or "cost_per_hour" not in rows[0]:
        print(f"plot_skus.py: {args.csv} is not a compare.csv", file=sys.stderr)
        return 2
    labels = [f"{r['sku']}\nTP {r['tensor_parallel']}" + ("" if r["step_time_factors"] == "fitted" else "\n(uncalibrated)")
              for r in rows]
    met = [r["cost_per_hour"] != "" for r in rows]
    cost = [float(r["gpu_cost_per_hour"]) if m else 0.0 for r, m in zip(rows, met)]
    gpus = [int(r["gpus"]) if m else 0 for r, m in zip(rows, met)]
    cheapest = min((c for c, m in zip(cost, met) if m), default=None)
    colours = ["tab:green" if m and c == cheapest else "tab:blue" for c, m in zip(cost, met)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    xs = range(len(rows))
    left.bar(xs, cost, color=colours)
    for x, c, m in zip(xs, cost, met):
        left.annotate(f"${c:,.0f}" if m else "not met", (x, c), ha="center", va="bottom")
    left.set_ylabel("$ an hour (the GPUs' share of their servers)")
    left.set_title("Cost of the fewest instances meeting the SLO")
    right.bar(xs, gpus, color=colours)
    right.set_ylabel("GPUs")
    right.set_title("GPUs they hold")
    for axis in (left, right):
        axis.set_xticks(list(xs))
        axis.set_xticklabels(labels)
    fig.tight_layout()
    out = args.out or args.csv.rsplit("/", 1)[0] + "/compare.png"
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
