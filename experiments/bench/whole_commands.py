#!/usr/bin/env python3
"""Whole `meshsim` commands as a user times them: start-up, loading and outputs included.

For each command: the median wall time and the largest resident memory of --runs runs
(each run's own figures, from wait4), and for a replay the simulation time it reports
itself (the "wall time" line of its summary table; summary.json
holds no wall time, so runs stay byte-identical), so start-up cost shows as the ratio of the two.
With --baseline, another build's meshsim runs the same commands side by side (say, a
checkout before a change), alternating runs so both see the same machine.

  experiments/bench/whole_commands.py [--meshsim build/tools/meshsim] [--baseline OTHER] [--runs 5]

The SplitwiseSim Baseline-H100 replay reads ../shared (skipped, with a message, without it).
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def timed(argv):
    """(wall seconds, max RSS in MiB, standard output) of one run of argv."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {code}")
        output.seek(0)
        return wall, usage.ru_maxrss / 1024.0, output.read().decode()


def reported_run_seconds(stdout):
    match = re.search(r"^wall time\s+([0-9.]+) s", stdout, re.MULTILINE)
    if not match:
        raise SystemExit("no 'wall time' line in the replay's summary table")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--meshsim", default=str(ROOT / "build/tools/meshsim"))
    parser.add_argument("--baseline", help="another meshsim to run side by side")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    out = tempfile.mkdtemp(prefix="meshsim-whole-")
    commands = [("--version", ["--version"], False),
                ("replay, default scenario", ["replay", "--out", out + "/default"], True)]
    baseline_h100 = ROOT / "configs/scenarios/splitwise-baseline-h100.json"
    if (ROOT.parent / "shared/traces").is_dir():
        commands.append(("replay, SplitwiseSim Baseline-H100",
                         ["replay", "--config", str(baseline_h100), "--out", out + "/h100"], True))
    else:
        print(f"{ROOT.parent / 'shared'} is absent: the Baseline-H100 replay is skipped")
    builds = [("meshsim", args.meshsim)] + ([("baseline", args.baseline)] if args.baseline else [])

    print("| command | build | wall (median) | max RSS | run time it reports | wall / reported |")
    print("|---|---|---|---|---|---|")
    for name, tail, reports in commands:
        figures = {build: ([], [], []) for build, _ in builds}
        for _ in range(args.runs):
            for build, binary in builds:
                wall, rss, stdout = timed([binary] + tail)
                walls, rsses, reported = figures[build]
                walls.append(wall)
                rsses.append(rss)
                if reports:
                    reported.append(reported_run_seconds(stdout))
        for build, _ in builds:
            walls, rsses, reported = figures[build]
            wall = statistics.median(walls)
            run = f"{statistics.median(reported):.3f} s" if reported else ""
            ratio = f"{wall / statistics.median(reported):.2f}" if reported else ""
            print(f"| {name} | {build} | {wall:.3f} s | {max(rsses):.1f} MiB | {run} | {ratio} |")


if __name__ == "__main__":
    main()
