#!/usr/bin/python3
"""Plots a `meshsim eval` folder (eval.csv, instances.csv) as one PNG, a row per (window, delay).

    tools/plot_eval.py EVAL_DIR [--out PNG]

Left: instances over time of the policies, the tuned baselines and the oracle. Right:
GPU-hours against SLO miss rate (log scale, so 99.0% and 99.9% are apart) of every play:
the hindsight static sizes as a front, each tuned baseline, the oracle and the policies.
Uses Debian's python3-matplotlib. Exit codes: 0 done, 2 bad input, 77 matplotlib missing.
"""
import argparse
import os
import sys

from plot_setup import pyplot, read_csv


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--out", help="PNG path (default: eval.png in the folder)")
    args = parser.parse_args()
    plt = pyplot("plot_eval.py")
    if plt is None:
        return 77
    try:
        runs = read_csv(os.path.join(args.dir, "eval.csv"))
        series = read_csv(os.path.join(args.dir, "instances.csv"))
    except OSError as e:
        print(f"plot_eval.py: {e}", file=sys.stderr)
        return 2
    if not runs or "gpu_hours" not in runs[0]:
        print(f"plot_eval.py: {args.dir} holds no eval.csv rows", file=sys.stderr)
        return 2
    cells = list(dict.fromkeys((r["window"], r["delay_s"]) for r in runs))
    fig, axes = plt.subplots(len(cells), 2, figsize=(13, 3.8 * len(cells)), squeeze=False)
    floor = 1e-5  # a miss rate of 0 is drawn at this floor
    miss = lambda r: max(floor, 1 - float(r["slo_attainment"]))
    for row, (window, delay) in enumerate(cells):
        ax = axes[row][0]
        here = [s for s in series if s["window"] == window and s["delay_s"] == delay]
        for policy in dict.fromkeys(s["policy"] for s in here):
            pts = [s for s in here if s["policy"] == policy]
            ax.plot([float(p["time_s"]) / 60 for p in pts], [float(p["instances"]) for p in pts], label=policy,
                    linewidth=2 if policy.startswith("ppo") else 1)
        ax.set_title(f"{window}: instances over time (scale-up delay {delay} s)")
        ax.set_xlabel("minutes")
        ax.legend(fontsize=7)
        ax = axes[row][1]
        plays = [r for r in runs if r["window"] == window and r["delay_s"] == delay]
        front = sorted((r for r in plays if r["role"] == "hindsight"), key=lambda r: float(r["gpu_hours"]))
        ax.plot([float(r["gpu_hours"]) for r in front], [miss(r) for r in front], marker=".", color="0.6",
                label="static sizes (hindsight)")
        # Target tracking's grids and the right-sizing bound, each a front.
        for policy in dict.fromkeys(r["policy"] for r in plays if r["role"] in ("front", "bound")):
            pts = sorted((r for r in plays if r["policy"] == policy and r["role"] in ("front", "bound")),
                         key=lambda r: float(r["gpu_hours"]))
            bound = pts[0]["role"] == "bound"
            ax.plot([float(r["gpu_hours"]) for r in pts], [miss(r) for r in pts], marker=".",
                    linestyle="-" if bound else ":", linewidth=1.5 if bound else 0.8,
                    label=policy.replace("_", " ") + (" (right-sizing optimum)" if bound else " (grid on this window)"))
        markers = "sD^v<>ph"
        for i, r in enumerate(r for r in plays if r["role"] == "tuned"):
            ax.plot(float(r["gpu_hours"]), miss(r), marker=markers[i % len(markers)], linestyle="",
                    label=f"{r['policy']} {r['parameter']} (tuned)")
        for r in plays:
            if r["role"] == "oracle":
                ax.plot(float(r["gpu_hours"]), miss(r), marker="*", markersize=12, linestyle="", label="oracle (heuristic)")
            if r["role"] == "policy":
                ax.plot(float(r["gpu_hours"]), miss(r), marker="P", markersize=11, linestyle="", label=r["policy"])
        target = 1 - float(plays[0]["slo_target"]) if "slo_target" in plays[0] else None
        if target:
            ax.axhline(target, color="r", linewidth=0.8, linestyle="--", label="SLO target")
        ax.set_yscale("log")
        ax.set_xlabel("GPU-hours")
        ax.set_ylabel("SLO miss rate (1 - attainment)")
        ax.set_title("cost against SLO misses (lower left is better)")
        ax.legend(fontsize=7)
        for a in axes[row]:
            a.grid(alpha=0.3)
    fig.tight_layout()
    out = args.out or os.path.join(args.dir, "eval.png")
    fig.savefig(out, dpi=100)
    print(f"plot_eval.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
