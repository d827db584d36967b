#!/usr/bin/python3
"""configs/README.md's scenario format shows the code's defaults: every value in its jsonc
block equals what a scenario that sets nothing resolves to (summary.json's "config"),
except the keys listed in EXAMPLES, which the block fills with an example on purpose.

    documented_defaults_test.py SOURCE_DIR MESHSIM WORK_DIR
"""
import json
import os
import re
import subprocess
import sys

# Keys whose documented value is an example, not the default (with why).
EXAMPLES = {
    "name",                         # a scenario's own name
    "catalog",                      # a user's folder; none by default
    "workload.trace",               # one of trace and generator is the example
    "workload.generator",           # a file, resolved into its figures
    "workload.max_requests",        # the test's own scenario limits its requests
    "cluster.nodes",                # a fixed cluster's example nodes (elastic: none)
    "autoscaler.static.sizes.mixed",  # a size per pool, none by default
    # Read into every batch class and the policy, not echoed under these keys.
    "cluster.batch.checkpoint_interval_s",
    "cluster.batch.cancel_answer_s",
    "cluster.batch.hung_share",
    "cluster.preemption.preemption_aggressiveness",
    "rl",                           # only scenarios with an RL environment have one
    "classes",                      # classes of service; none by default
}


def strip_comments(text):
    """jsonc to json: drops // comments outside strings and trailing commas."""
    lines = []
    for line in text.split("\n"):
        out, in_string, i = [], False, 0
        while i < len(line):
            if line[i] == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            if not in_string and line.startswith("//", i):
                break
            out.append(line[i])
            i += 1
        lines.append("".join(out))
    return re.sub(r",\s*([}\]])", r"\1", "\n".join(lines))


def compare(documented, resolved, path, problems):
    if path.rstrip(".") in EXAMPLES:
        return
    if isinstance(documented, dict):
        for key, value in documented.items():
            if f"{path}{key}" in EXAMPLES:
                continue
            if not isinstance(resolved, dict) or key not in resolved:
                problems.append(f"{path}{key}: documented, but a scenario does not resolve it")
                continue
            compare(value, resolved[key], f"{path}{key}.", problems)
    elif documented != resolved:
        problems.append(f"{path.rstrip('.')}: documented {json.dumps(documented)}, the default is {json.dumps(resolved)}")


def main():
    source, meshsim, work = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(os.path.join(source, "configs", "README.md")) as f:
        readme = f.read()
    start = readme.index("```jsonc") + len("```jsonc")
    documented = json.loads(strip_comments(readme[start:readme.index("```", start)]))
    os.makedirs(work, exist_ok=True)
    scenario = os.path.join(work, "nothing-set.json")
    with open(scenario, "w") as f:
        generator = os.path.join(source, "configs", "workloads", "azure_conv.json")
        json.dump({"workload": {"generator": generator, "max_requests": 10}}, f)
    out = os.path.join(work, "run")
    subprocess.run(["rm", "-rf", out], check=True)
    subprocess.run([meshsim, "replay", "--config", scenario, "--out", out, "--quiet"], check=True)
    with open(os.path.join(out, "summary.json")) as f:
        resolved = json.load(f)["config"]
    problems = []
    compare(documented, resolved, "", problems)
    for problem in problems:
        print(f"configs/README.md: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
