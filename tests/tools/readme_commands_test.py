#!/usr/bin/env python3
"""The README's front page keeps its promises: at most 300 lines, and every command in
its ```sh and ```python blocks runs as written, from a checkout with the build in
build/ and the public traces in ../shared/traces (as the walkthroughs say).

The commands run in a scratch checkout (links to the source folders and the build
folder) whose parent holds a link to ../shared when it exists. Skipped, each saying why:
the quick start's two scripts (CI runs both itself), commands needing ../shared where it
is absent (failed instead under MESHSIM_REQUIRE_SHARED=1), and commands needing a part
this build left out (LibTorch, the Python package, the benchmarks).

Usage: readme_commands_test.py SOURCE_DIR BUILD_DIR WORK_DIR HAVE_RL HAVE_PYTHON HAVE_BENCH
"""
import os
import re
import shutil
import subprocess
import sys

MAX_LINES = 300
QUICK_START = ("./tools/run.sh", "./tools/test.sh")
# A hang guard, not a speed check: `eval` takes about 5 minutes alone on 2 cores and twice
# that in CI, where the suite's other long tests share the machine with it.
COMMAND_TIMEOUT_S = 1800
# What a fresh checkout holds (the project's top level), so nothing a user made in theirs
# (a runs/ folder from the walkthroughs) leaks into the scratch one.
TOP_LEVEL = ("CMakeLists.txt", "README.md", "sim", "scheduler", "rl", "traces", "configs", "experiments", "tests",
             "tools")


def blocks(text):
    """(language, line number, code) of every fenced block."""
    found = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        found.append((match.group(1), text.count("\n", 0, match.start()) + 1, match.group(2)))
    return found


def commands(text):
    """(line number, kind, code): each line of a sh block, each python block whole."""
    out = []
    for language, line, code in blocks(text):
        if language == "sh":
            for offset, command in enumerate(code.splitlines(), start=1):
                if command.strip() and not command.lstrip().startswith("#"):
                    out.append((line + offset, "sh", command))
        elif language == "python":
            out.append((line + 1, "python", code))
    return out


def metrics_problems(where, code, checkout):
    """A walkthrough that writes the core's metrics (--metrics FILE) has latencies in them:
    every latency histogram counts at least one call."""
    match = re.search(r"--metrics\s+(\S+)", code)
    if not match:
        return []
    with open(os.path.join(checkout, match.group(1))) as f:
        counts = re.findall(r"^(\w+_latency_ms)_count (\d+)$", f.read(), re.M)
    if not counts:
        return [f"{where}: {match.group(1)} has no latency histogram"]
    return [f"{where}: {name} is empty (_count 0): the walkthrough's script makes no such call"
            for name, count in counts if int(count) == 0]


def scratch_checkout(source, build, work):
    shutil.rmtree(work, ignore_errors=True)
    checkout = os.path.join(work, "checkout")
    os.makedirs(checkout)
    for name in TOP_LEVEL:
        os.symlink(os.path.join(source, name), os.path.join(checkout, name))
    os.symlink(build, os.path.join(checkout, "build"))
    shared = os.path.join(os.path.dirname(source), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(work, "shared"))
    return checkout, os.path.isdir(shared)


def main():
    source, build, work = (os.path.abspath(p) for p in sys.argv[1:4])
    have_rl, have_python, have_bench = (flag == "1" for flag in sys.argv[4:7])
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        text = f.read()
    problems = []
    lines = text.count("\n")
    if lines > MAX_LINES:
        problems.append(f"README.md has {lines} lines; its front page promises at most {MAX_LINES}")
    checkout, have_shared = scratch_checkout(source, build, work)
    # Python blocks run as the README says: in the virtual environment tools/setup.sh makes.
    venv_python = os.path.join(source, ".venv", "bin", "python")
    python = venv_python if os.path.exists(venv_python) else "/usr/bin/python3"
    require_shared = os.environ.get("MESHSIM_REQUIRE_SHARED") == "1"
    ran = 0
    for line, kind, code in commands(text):
        where = f"README.md:{line}"
        why_not = None
        if kind == "sh" and code.split()[0] in QUICK_START:
            why_not = "the quick start's scripts run in CI (.ci/run)"
        elif "../shared/" in code and not have_shared:
            if require_shared:
                problems.append(f"{where}: needs ../shared, which MESHSIM_REQUIRE_SHARED says is there")
                continue
            why_not = "../shared/traces is absent"
        elif re.search(r"meshsim (train|eval)\b", code) and not have_rl:
            why_not = "this build has no LibTorch (meshsim-rl)"
        elif kind == "python" and not have_python:
            why_not = "this build has no Python package"
        elif "build/experiments/bench/" in code and not have_bench:
            why_not = "this build has no benchmarks"
        if why_not:
            print(f"skip {where}: {why_not}")
            continue
        env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
        argv = ["/bin/bash", "-euo", "pipefail", "-c", code] if kind == "sh" else [python, "-c", code]
        try:
            result = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            problems.append(f"{where}: did not finish in {COMMAND_TIMEOUT_S} s: {code.strip()[:120]}")
            continue
        ran += 1
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip()[-2000:]
            problems.append(f"{where}: exit {result.returncode}: {code.strip()[:120]}\n{tail}")
        else:
            problems += metrics_problems(where, code, checkout)
            print(f"ok   {where}: {code.strip().splitlines()[0][:100]}")
    if ran == 0:
        problems.append("no README command ran")
    for problem in problems:
        print("FAIL", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
