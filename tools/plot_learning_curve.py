#!/usr/bin/python3
"""Plots the learning_curve.csv of `meshsim train` as one PNG of five panels.

    tools/plot_learning_curve.py LEARNING_CURVE_CSV [--out PNG]

Panels against decisions trained: mean reward per decision, SLO misses (the share of
requests missing the SLO, on a log scale, so 99% and 99.9% stay apart), mean instances
per environment, the PPO diagnostics (approximate KL, clip fraction, explained variance)
and the validation GPU-hours. Where the run has validation spans, the SLO and instance
panels also show each checkpoint's validation play (validation.csv) and the level of the
baseline it must beat, the tuned static size on the same spans (validation_baseline.csv);
the GPU-hours panel shows what each checkpoint's play cost there and rings the one kept
as best/ (the cheapest meeting the SLO target). Uses Debian's python3-matplotlib.
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import json
import os
import sys

from plot_setup import pyplot, read_csv


def smoothed(values):
    """Exponential moving average with a span of about a tenth of the run."""
    alpha = 2.0 / (max(1, len(values) // 10) + 1)
    out, level = [], None
    for v in values:
        level = v if level is None else level + alpha * (v - level)
        out.append(level)
    return out


def slo_target(config_path):
    """rl.slo_target of the run's config.json (the share the evaluation holds baselines
    to), or None where the file or key is missing."""
    try:
        with open(config_path) as f:
            return float(json.load(f)["rl"]["slo_target"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_rows(path):
    """The rows of a CSV beside the learning curve, or [] where it is absent."""
    try:
        return read_csv(path)
    except OSError:
        return []


# SLO misses are drawn on a log scale: a run that meets every SLO sits on this floor.
MISS_FLOOR = 0.01  # percent


def misses(attainment):
    """The percentage of requests missing the SLO, floored for the log scale."""
    return max(MISS_FLOOR, 100 * (1 - attainment))


def draw_validation(axes, folder, decisions_at):
    """Each checkpoint's validation play as points, and the tuned static size's level on
    the same spans as a dotted line (a residual policy's base, target tracking, dashed), on
    the SLO (axes[1]), instances (axes[2]) and validation GPU-hours (axes[4]) panels."""
    played = [r for r in read_rows(os.path.join(folder, "validation.csv")) if int(r["iteration"]) in decisions_at]
    baseline = read_rows(os.path.join(folder, "validation_baseline.csv"))
    for ax, column, value in ((axes[1], "slo_attainment", misses), (axes[2], "mean_instances", float),
                              (axes[4], "gpu_hours", float)):
        if played:
            ax.plot([decisions_at[int(r["iteration"])] for r in played], [value(float(r[column])) for r in played],
                    "o", color="tab:green", markersize=4, label="checkpoint on validation")
        for b, style in zip(baseline, (":", "--")):  # the static size, then a residual policy's base
            name = "tuned static" if b["policy"] == "static" else "target tracking (residual base)"
            ax.axhline(value(float(b[column])), color="tab:green", linestyle=style,
                       label=f"{name} {b['parameter']} on validation")
    best = [r for r in played if r.get("best") == "1"]
    if best:
        axes[4].plot([decisions_at[int(r["iteration"])] for r in best], [float(r["gpu_hours"]) for r in best], "o",
                     markersize=11, markerfacecolor="none", markeredgecolor="tab:red", label="kept as best/")
    if not played:
        axes[4].text(0.5, 0.5, "no validation spans (rl.validation)", ha="center", va="center",
                     transform=axes[4].transAxes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", help="PNG path (default: learning_curve.png beside the CSV)")
    args = parser.parse_args()
    plt = pyplot("plot_learning_curve.py")
    if plt is None:
        return 77
    try:
        rows = read_csv(args.csv)
    except OSError as e:
        print(f"plot_learning_curve.py: {e}", file=sys.stderr)
        return 2
    if not rows or "decisions" not in rows[0]:
        print(f"plot_learning_curve.py: {args.csv} is not a learning_curve.csv (or has no rows)", file=sys.stderr)
        return 2
    x = [int(r["decisions"]) for r in rows]
    col = lambda name: [float(r[name]) for r in rows]
    fig, axes = plt.subplots(1, 5, figsize=(21, 3.8))
    # Each iteration's figure faint, and its exponential average over about a tenth of
    # the run bold: single iterations are noisy (episodes end in bursts). Misses are
    # averaged before the floor, so a smoothed curve is a share of requests too.
    slo_misses = [100 * (1 - v) for v in col("slo_attainment")]
    for ax, values, title in ((axes[0], col("mean_reward"), "mean reward per decision"),
                              (axes[1], slo_misses, "SLO misses (% of requests, log scale)"),
                              (axes[2], col("mean_instances"), "instances (mean per environment)")):
        floor = (lambda v: max(MISS_FLOOR, v)) if ax is axes[1] else (lambda v: v)
        ax.plot(x, [floor(v) for v in values], color="tab:blue", alpha=0.3, label="per iteration")
        ax.plot(x, [floor(v) for v in smoothed(values)], color="tab:blue", label="smoothed")
        ax.set_title(title)
    axes[1].set_yscale("log")
    target = slo_target(os.path.join(os.path.dirname(args.csv) or ".", "config.json"))
    if target is not None:
        axes[1].axhline(misses(target), color="tab:red", linestyle="--",
                        label=f"SLO target: at most {100 * (1 - target):g}% missed")
    folder = os.path.dirname(args.csv) or "."
    axes[4].set_title("GPU-hours on the validation spans")
    draw_validation(axes, folder, {int(r["iteration"]): v for r, v in zip(rows, x)})
    axes[4].set_xlim(axes[0].get_xlim())
    for ax in (axes[1], axes[2], axes[4]):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
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
