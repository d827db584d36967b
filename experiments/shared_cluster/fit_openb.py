#!/usr/bin/env python3
"""Fits the batch-job generator (configs/workloads/openb_batch.json) to the Alibaba openb
pod list, over the same window and scales as configs/scenarios/shared-cluster.json: per
qos class, the Poisson arrival rate, a lognormal run time (median and sigma of its log),
and the most common pod shapes (GPUs, CPU cores, memory) with their shares. Only these
figures enter the repository; the trace stays in ../shared/traces.

    python3 experiments/shared_cluster/fit_openb.py ../shared/traces/alibaba_gpu2023_openb_pod_list_default.csv
"""
import collections
import csv
import json
import math
import sys

START_S = 10_321_000      # trace second the window starts at (most pods come later)
ARRIVAL_SCALE = 1.362e-3  # run seconds per trace second: the window becomes ~3,514 s
DURATION_SCALE = 2e-3     # run seconds per trace second of run time
MIN_DURATION_S = 1.0
SHAPES = 6                # most common shapes kept per class


def main(path):
    rows = list(csv.DictReader(open(path)))
    end = max(int(r["creation_time"]) for r in rows)
    span = (end - START_S) * ARRIVAL_SCALE
    by_class = collections.defaultdict(list)
    for r in rows:
        created, deleted = int(r["creation_time"]), int(r["deletion_time"])
        if created < START_S:
            continue  # the generator models arrivals inside the window only
        start = int(r["scheduled_time"]) if r["scheduled_time"] else created
        duration = max(MIN_DURATION_S, (deleted - start) * DURATION_SCALE)
        gpu = int(r["num_gpu"]) * int(r["gpu_milli"]) / 1000
        shape = (round(gpu, 2), round(int(r["cpu_milli"]) / 1000), round(int(r["memory_mib"]) * 1.048576))
        by_class[r["qos"]].append((duration, shape))
    classes = []
    for qos, jobs in sorted(by_class.items()):
        # A lognormal with the sample's median and mean: the mean keeps the GPU load of
        # the heavy tail, the median the typical job.
        durations = sorted(d for d, _ in jobs)
        median = durations[len(durations) // 2]
        mean = sum(durations) / len(durations)
        sigma = math.sqrt(2 * math.log(mean / median)) if mean > median else 0.0
        shapes = collections.Counter(s for _, s in jobs).most_common(SHAPES)
        total = sum(c for _, c in shapes)
        classes.append({
            "class": qos,
            "rate_per_s": round(len(jobs) / span, 6),
            "duration_median_s": round(median, 3),
            "duration_sigma": round(sigma, 4),
            "shapes": [{"gpu": g, "cpu": c, "memory_mb": m, "weight": round(n / total, 4)}
                       for (g, c, m), n in shapes],
        })
    out = {
        "comment": ("Batch jobs fitted by experiments/shared_cluster/fit_openb.py to the Alibaba openb pod list "
                    f"(cluster-trace-gpu-v2023), trace seconds {START_S} to {end} scaled to {span:.0f} s of "
                    f"arrivals, run times x {DURATION_SCALE}: per qos class the Poisson rate, a lognormal run "
                    f"time (the sample's median and mean) and the {SHAPES} most common pod shapes. Regenerate rather than edit."),
        "duration_s": round(span, 1),
        "classes": classes,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces/alibaba_gpu2023_openb_pod_list_default.csv")
