#!/usr/bin/env python3
"""GPU-hours against SLO attainment for every autoscaler on one trace.

Replays the trace with `meshsim replay --autoscaler X` for: static at each size of a
sweep (the best static size is the cheapest one meeting the SLO goal), elastic (seed
003's rules, at a few requests_per_worker_capacity values), target tracking (the
Kubernetes HPA rules, on requests per instance swept from 16 to 64, and on KV-cache
utilisation swept from 50% to 90%: cost-versus-SLO fronts) and the oracle (a bound, not a
policy). Prints a table and writes front.csv in --out.

  experiments/autoscalers/front.py --trace ../shared/traces/azure2023_conv.csv [--rate-scale 4]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(meshsim, config, trace, rate_scale, policy, out_dir):
    path = os.path.join(out_dir, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    cmd = [meshsim, "replay", "--config", path, "--out", out_dir, "--quiet", "--autoscaler", policy,
           "--rate-scale", str(rate_scale)]
    if trace:
        cmd += ["--trace", trace]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--meshsim", default=os.path.join(ROOT, "build", "tools", "meshsim"))
    parser.add_argument("--config", default=os.path.join(ROOT, "configs", "scenarios", "default.json"))
    parser.add_argument("--trace", help="a trace file (default: the config's workload)")
    parser.add_argument("--rate-scale", type=float, default=1.0)
    parser.add_argument("--static-sizes", default="1,2,3,4,6")
    parser.add_argument("--out", default=None, help="folder for the runs and front.csv (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="meshsim-front-")
    with open(args.config) as f:
        base = json.load(f)
    base["workload"]["generator"] = os.path.join(os.path.dirname(os.path.abspath(args.config)),
                                                 base["workload"]["generator"]) if "generator" in base["workload"] else None
    if base["workload"]["generator"] is None:
        del base["workload"]["generator"]
    tag = base["serving"]["start_state"][0]["tag"]

    variants = []
    for size in [int(s) for s in args.static_sizes.split(",")]:
        variants.append((f"static {size}", "static", {"static": {"sizes": {tag: size}}}))
    for capacity in (16, 32, 64):
        variants.append((f"elastic cap {capacity}", "elastic",
                         {"elastic": {"requests_per_worker_capacity": capacity, "max_workers": 16}}))
    for target in (16, 24, 32, 48, 64):
        variants.append((f"target_tracking {target} req/instance", "target_tracking",
                         {"target_tracking": {"metric": "requests_per_instance", "target": target}}))
    for target in (0.5, 0.7, 0.9):
        variants.append((f"target_tracking KV {int(target * 100)}%", "target_tracking",
                         {"target_tracking": {"metric": "kv_utilisation", "target": target}}))
    variants.append(("oracle", "oracle", {}))

    rows = []
    for name, policy, params in variants:
        config = json.loads(json.dumps(base))
        config["autoscaler"] = params
        run_dir = os.path.join(out, name.replace(" ", "_").replace("%", "").replace("/", "_per_"))
        os.makedirs(run_dir, exist_ok=True)
        s = run(args.meshsim, config, args.trace, args.rate_scale, policy, run_dir)
        rows.append({
            "policy": name,
            "slo_attainment": s["slo"]["attainment"],
            "ttft_p99_s": s["latency_s"]["ttft"]["p99"],
            "tbt_p99_s": s["latency_s"]["tbt"]["p99"],
            "gpu_hours": s["cost"]["gpu_hours"],
            "usd": s["cost"]["usd"],
            "mean_instances": s["scaling"]["mean_instances"],
            "scaling_actions": s["scaling"]["scale_ups"] + s["scaling"]["scale_downs"],
        })
    with open(os.path.join(out, "front.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"| policy | SLO met | P99 TTFT s | P99 TBT s | GPU-hours | mean instances | scaling actions |")
    print(f"| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['policy']} | {100 * r['slo_attainment']:.1f}% | {r['ttft_p99_s']:.3f} | {r['tbt_p99_s']:.3f} | "
              f"{r['gpu_hours']:.2f} | {r['mean_instances']:.2f} | {r['scaling_actions']} |")
    print(f"runs and front.csv in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
