#!/usr/bin/python3
"""Turns a meshsim run folder into PNG plots.

    tools/plot.py RUN_DIR [--out DIR]

Writes latency_cdf.png (TTFT, TBT and end-to-end latency CDFs of completed requests) and
timeline.png (arrivals and completions, queued and running requests, instances and
utilisation per interval; on a shared cluster also the GPUs serving and batch jobs hold,
batch jobs queued and preemptions per interval). Uses Debian's python3-matplotlib (hence /usr/bin/python3).
Exit codes: 0 done, 2 bad input, 77 matplotlib missing (ctest's skip code).
"""
import argparse
import json
import os
import sys

from plot_setup import pyplot, read_csv


def cdf(values):
    values = sorted(values)
    n = len(values)
    return values, [(i + 1) / n for i in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--out", help="folder for the PNGs (default: the run folder)")
    args = parser.parse_args()
    plt = pyplot("plot.py")
    if plt is None:
        return 77
    out = args.out or args.run_dir
    try:
        requests = read_csv(os.path.join(args.run_dir, "requests.csv"))
        series = read_csv(os.path.join(args.run_dir, "timeseries.csv"))
    except OSError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    done = [r for r in requests if r["status"] == "completed"]
    if not done or not series:
        print(f"plot.py: {args.run_dir}: no completed requests or no time series to plot", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)

    # The SLO's targets, where summary.json has them: a vertical line on their CDFs.
    # A shared cluster's summary has a batch section: only its run gets the batch panels
    # (every run's time series has the batch columns, at 0 without batch jobs).
    targets, shared = {}, False
    try:
        with open(os.path.join(args.run_dir, "summary.json")) as f:
            summary = json.load(f)
        slo = summary.get("slo", {})
        targets = {"ttft_s": slo.get("ttft_target_s"), "tbt_mean_s": slo.get("tbt_target_s")}
        shared = "batch" in summary
    except (OSError, ValueError):
        pass
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, column, title in zip(axes, ["ttft_s", "tbt_mean_s", "e2e_s"],
                                 ["time to first token", "time between tokens (mean per request)",
                                  "end-to-end latency"]):
        x, y = cdf(float(r[column]) for r in done)
        ax.plot(x, y)
        if targets.get(column):
            ax.axvline(targets[column], color="tab:red", linestyle="--", label=f"SLO target {targets[column]:g} s")
            ax.legend(loc="lower right")
        ax.set_xscale("log")
        ax.set_xlabel("seconds")
        ax.set_ylabel("fraction of requests")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"{len(done)} completed requests")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency_cdf.png"), dpi=100)
    plt.close(fig)

    t = [float(row["end_s"]) for row in series]
    width = [float(row["end_s"]) - float(row["start_s"]) or 1.0 for row in series]
    # A shared cluster's run gets two more panels: GPUs held by serving and by batch jobs
    # with preemptions per interval, and batch jobs running and queued.
    fig, axes = plt.subplots(5 if shared else 3, 1, figsize=(12, 15 if shared else 9), sharex=True)
    axes[0].plot(t, [int(r["arrivals"]) / w for r, w in zip(series, width)], label="arrivals/s")
    axes[0].plot(t, [int(r["completions"]) / w for r, w in zip(series, width)], label="completions/s")
    axes[0].set_ylabel("requests per second")
    axes[1].plot(t, [int(r["queued"]) for r in series], label="queued")
    axes[1].plot(t, [int(r["running"]) for r in series], label="running")
    axes[1].set_ylabel("requests")
    instances = [int(r["instances"]) for r in series]
    axes[2].plot(t, instances, label="instances")
    axes[2].set_ylabel("instances")
    axes[2].set_ylim(0, max(instances) + 1)
    util = axes[2].twinx()
    util.plot(t, [float(r["busy_share"]) for r in series], color="tab:orange", label="busy share")
    util.plot(t, [float(r["roofline_utilisation"]) for r in series], color="tab:red", label="roofline utilisation")
    util.plot(t, [float(r["kv_used_fraction"]) for r in series], color="tab:green", label="KV cache in use")
    util.set_ylabel("fraction")
    util.legend(loc="upper right")
    util.set_ylim(0, 1.05)
    if shared:
        serving = [float(r["serving_gpus"]) for r in series]
        batch = [float(r["batch_gpus"]) for r in series]
        axes[3].stackplot(t, serving, batch, labels=["GPUs held by serving", "GPUs held by batch jobs"],
                          colors=["tab:blue", "tab:gray"], alpha=0.6, step="pre")
        axes[3].set_ylabel("GPUs (mean over the interval)")
        preempted = axes[3].twinx()
        preempted.bar(t, [int(r["batch_preemptions"]) for r in series], width=[-w for w in width], align="edge",
                      color="tab:red", alpha=0.7, label="preemptions")
        preempted.set_ylabel("preemptions per interval")
        preempted.legend(loc="upper right")
        axes[4].plot(t, [int(r["batch_running"]) for r in series], label="batch jobs running")
        axes[4].plot(t, [int(r["batch_queued"]) for r in series], label="batch jobs queued")
        axes[4].set_ylabel("batch jobs")
    axes[-1].set_xlabel("simulated time (s)")
    for ax in axes:
        ax.legend(loc="upper left")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "timeline.png"), dpi=100)
    plt.close(fig)
    batch_panels = " (with the shared cluster's GPUs, preemptions and batch jobs)" if shared else ""
    print(f"wrote {os.path.join(out, 'latency_cdf.png')} and {os.path.join(out, 'timeline.png')}{batch_panels}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
