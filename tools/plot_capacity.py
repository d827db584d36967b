#!/usr/bin/python3
"""Plots the capacity.csv of `meshsim capacity` as one PNG of two panels.

    tools/plot_capacity.py CAPACITY_CSV [--target 0.99] [--out PNG]

Left: SLO attainment against instances (a search over instances) or rate scale (a search
over the load), every probe a point, the target a dashed line and the answer circled.
Right: goodput (requests meeting the SLO per second) and the load offered, on the same
axis. Uses Debian's python3-matplotlib.
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import sys

from plot_setup import pyplot, read_csv


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--out", help="PNG path (default: capacity.png beside the CSV)")
    args = parser.parse_args()
    plt = pyplot("plot_capacity.py")
    if plt is None:
        return 77
    try:
        rows = read_csv(args.csv)
    except OSError as e:
        print(f"plot_capacity.py: {e}", file=sys.stderr)
        return 2
    if not rows or "slo_attainment" not in rows[0]:
        print(f"plot_capacity.py: {args.csv} is not a capacity.csv", file=sys.stderr)
        return 2
    # The axis the search moved along: instances when they vary, else the rate.
    by_instances = len({r["instances"] for r in rows}) > 1
    key = "instances" if by_instances else "rate_scale"
    # A probe that judged no request has no attainment: nothing to draw.
    rows = [r for r in rows if r["slo_attainment"] != ""]
    if not rows:
        print(f"plot_capacity.py: no probe of {args.csv} judged a request: nothing to draw", file=sys.stderr)
        return 0
    rows.sort(key=lambda r: float(r[key]))
    xs = [float(r[key]) for r in rows]
    slo = [100 * float(r["slo_attainment"]) for r in rows]
    meets = [r["meets_target"] == "1" for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    left.plot(xs, slo, "o-", color="tab:blue")
    left.axhline(100 * args.target, linestyle="--", color="tab:red", label=f"target {100 * args.target:g}%")
    met_x = [x for x, m in zip(xs, meets) if m]
    if met_x:
        answer = min(met_x) if by_instances else max(met_x)
        left.plot([answer], [slo[xs.index(answer)]], "o", markersize=14, markerfacecolor="none",
                  markeredgecolor="tab:green", label=f"answer: {answer:g}")
    left.set_xlabel("instances" if by_instances else "rate scale (x the trace's rate)")
    left.set_ylabel("SLO met (% of the requests judged)")
    if not by_instances or max(xs) / max(min(xs), 1e-9) > 16:
        left.set_xscale("log")
    left.legend()
    left.set_title("SLO attainment of each probe")
    right.plot(xs, [float(r["offered_per_s"]) for r in rows], "s--", color="tab:gray", label="offered")
    right.plot(xs, [float(r["goodput_per_s"]) for r in rows], "o-", color="tab:green", label="goodput (SLO met)")
    right.set_xlabel(left.get_xlabel())
    right.set_ylabel("requests per second")
    if left.get_xscale() == "log":
        right.set_xscale("log")
    right.legend()
    right.set_title("Goodput against the load offered")
    fig.tight_layout()
    out = args.out or args.csv.rsplit("/", 1)[0] + "/capacity.png"
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
