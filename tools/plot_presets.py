#!/usr/bin/python3
"""Plots the presets.csv of `meshsim compare-presets` as one PNG of six panels.

    tools/plot_presets.py PRESETS_CSV [--out PNG]

Panels, one bar per policy: serving SLO attainment, serving P99 TTFT, scale-ups blocked,
batch jobs queued at the end, GPU-hours lost to preemption, and preemptions by the
preemptor's class (from preemptions.csv beside the CSV). With several seeds a bar is the
mean over them and its whisker spans the lowest to the highest. Uses Debian's
python3-matplotlib. Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import math
import os
import sys

from plot_setup import pyplot, read_csv


def by_policy(rows):
    """The rows of each policy, policies in first-seen order."""
    groups = {}
    for r in rows:
        groups.setdefault(r["policy"], []).append(r)
    return groups


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="PNG path (default: presets.png beside the CSV)")
    args = parser.parse_args()
    plt = pyplot("plot_presets.py")
    if plt is None:
        return 77
    folder = os.path.dirname(args.csv) or "."
    try:
        rows = read_csv(args.csv)
        by_class_path = os.path.join(folder, "preemptions.csv")
        by_class = read_csv(by_class_path) if os.path.exists(by_class_path) else []
    except OSError as e:
        print(f"plot_presets.py: {e}", file=sys.stderr)
        return 2
    if not rows or "policy" not in rows[0]:
        print(f"plot_presets.py: {args.csv} is not a presets.csv", file=sys.stderr)
        return 2
    groups = by_policy(rows)
    names = list(groups)
    seeds = max(len(g) for g in groups.values())
    fig, axes = plt.subplots(2, 3, figsize=(15, 7.2))
    axes = axes.flatten()
    def measured(row, key, scale=1.0):  # None where the run judged no request (an empty cell)
        return None if row[key] == "" else scale * float(row[key])

    panels = [
        ("serving SLO attainment (%)", lambda r: measured(r, "slo_attainment", 100), 2),
        ("serving P99 TTFT (s)", lambda r: measured(r, "ttft_p99_s"), 3),
        ("serving scale-ups blocked", lambda r: float(r["scale_ups_blocked"]), 1),
        ("batch jobs queued at the end", lambda r: float(r["jobs_queued"]), 1),
        ("GPU-hours lost to preemption", lambda r: float(r["lost_gpu_hours"]), 2),
    ]
    for ax, (title, figure, decimals) in zip(axes, panels):
        # Each policy's runs that measured the figure; a policy with none gets no bar ("-").
        values = [[x for x in (figure(r) for r in groups[n]) if x is not None] for n in names]
        means = [sum(v) / len(v) if v else 0.0 for v in values]
        spread = [[m - min(v) if v else 0.0 for m, v in zip(means, values)],
                  [max(v) - m if v else 0.0 for m, v in zip(means, values)]]
        bars = ax.bar(names, means, color="tab:blue", yerr=spread if seeds > 1 else None, capsize=4)
        # The value on each bar, rounded down (an SLO short of 100% never reads 100.00).
        scale = 10 ** decimals
        ax.bar_label(bars, labels=[f"{math.floor(m * scale) / scale:.{decimals}f}" if v else "-"
                                   for m, v in zip(means, values)],
                     fontsize="small", label_type="edge", padding=2, position=(12, 0))
        ax.margins(y=0.12)
        ax.set_title(title)
        if title.startswith("serving SLO") and any(values):
            # Policies differ by a few points near 100%: start the axis near the lowest.
            ax.set_ylim(max(0.0, math.floor(min(min(v) for v in values if v)) - 2), 100.5)
    # Preemptions stacked by who preempted (mean per run).
    ax = axes[5]
    runs = {n: len(groups[n]) for n in names}
    preemptors = sorted({r["preemptor"] for r in by_class})
    bottom = [0.0] * len(names)
    colors = plt.get_cmap("tab10")
    for k, preemptor in enumerate(preemptors):
        values = [sum(float(r["preemptions"]) for r in by_class if r["policy"] == n and r["preemptor"] == preemptor)
                  / runs[n] for n in names]
        ax.bar(names, values, bottom=bottom, color=colors(k % 10), label=f"by {preemptor}")
        bottom = [b + v for b, v in zip(bottom, values)]
    for x, total in enumerate(bottom):
        ax.annotate(f"{total:.0f}", (x, total), ha="center", va="bottom", fontsize="small")
    ax.margins(y=0.12)
    ax.set_title("preemptions by the preemptor's class")
    if preemptors:
        ax.legend(fontsize="small")
    if seeds > 1:
        fig.suptitle(f"means over {seeds} seeds; whiskers from the lowest to the highest")
    fig.tight_layout()
    out = args.out or os.path.join(folder, "presets.png")
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
