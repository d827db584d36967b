#!/usr/bin/env python3
"""Random scenario scripts through the named edge give the outputs a recorded build gave.

The scheduling core is rebuilt from the inside (ids for names, integer time for seconds)
while its edge, the seeds' calls that `meshsim scenario` plays, must not move by a byte.
This test makes seeded random scripts of core calls (pools, agents, both submit paths,
evaluations, manual preemptions with holds, hung agents, health checks, policy changes,
state saved and loaded again, clock advances of odd fractions of a second) over a few
small nodes, plays each with `--check` (the core's invariants after every step), and
compares a digest of what it printed and of every state file it wrote against
tests/golden/script_digests.json, recorded by an earlier build. A script that fails its
invariants, or whose output differs, is named by its seed, with its first differing line
when the recorded output is at hand.

Usage: script_digest_test.py MESHSIM WORKDIR [--record]
  --record rewrites the digests from this build (only when a change is meant to move
  the edge; say so in the commit).
"""
import hashlib
import json
import pathlib
import random
import shutil
import subprocess
import sys

GENERATOR = 1  # bump when the scripts change: the digests must then be recorded again
SCRIPTS = 300
DIGESTS = pathlib.Path(__file__).resolve().parents[1] / "golden" / "script_digests.json"

POOLS = ["p0", "p1", "p2"]
AGENTS = ["a0", "a1", "a2", "a3", "a4"]
TASKS = ["t%d" % i for i in range(10)]
LABELS = [{}, {"tier": "gold"}, {"tier": "bronze"}, {"team": "x", "tier": "gold"}]


def resources(rng, most_gpu=2):
    out = {"cpu": rng.choice([0.5, 1, 2, 4]), "memory": rng.choice([512, 1024, 4096])}
    if rng.random() < 0.5:
        out["gpu"] = rng.randint(0, most_gpu)
    return out


def task_call(rng, name):
    args = {"task_id": rng.choice(TASKS), "resources": resources(rng), "priority": rng.choice([0, 1, 2.5, 5, 9, 10])}
    args["pool_name" if name == "submit_task_with_preemption" else "pool"] = rng.choice(POOLS)
    if rng.random() < 0.4:
        args["labels"] = rng.choice(LABELS)
    if rng.random() < 0.4:
        args["estimated_duration"] = rng.choice([0.7, 3, 12.25, 100])
    if rng.random() < 0.3:
        args["checkpoint_interval"] = rng.choice([0.5, 2, 7.3])
    return {"call": name, "args": args}


def step(rng, index):
    kind = rng.randrange(100)
    if kind < 10:
        args = {"name": rng.choice(POOLS), "resources": resources(rng, 8)}
        args["resources"]["cpu"] = rng.choice([4, 8, 16])
        if rng.random() < 0.3:
            args["labels"] = rng.choice(LABELS)
        if rng.random() < 0.3:
            args["placement_strategy"] = rng.choice(["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"])
        if rng.random() < 0.25:
            args["pg_pool_config"] = {"enable": True, "high_priority_pg_specs": [{"cpu": 1, "memory": 512}],
                                      "enable_dynamic_pgs": rng.random() < 0.7, "max_dynamic_pgs": rng.randint(1, 4),
                                      "enable_pg_reuse": rng.random() < 0.7, "high_priority_threshold": 5.0}
        return {"call": rng.choice(["create_pool", "ensure_pool"]), "args": args}
    if kind < 16:
        return {"call": "create_agent", "args": {"name": rng.choice(AGENTS), "pool": rng.choice(POOLS),
                                                 "resources": resources(rng)}}
    if kind < 20:
        return {"call": "delete_agent", "args": {"name": rng.choice(AGENTS + TASKS), "force": rng.random() < 0.5,
                                                 "destroy_pg": rng.random() < 0.7}}
    if kind < 38:
        return task_call(rng, "submit_task_with_preemption")
    if kind < 46:
        return task_call(rng, "submit_with_pg_preemption")
    if kind < 49:
        return {"call": "register_running_task", "args": {"task_id": rng.choice(TASKS), "agent_name": rng.choice(AGENTS),
                                                          "priority": rng.choice([1, 3, 6])}}
    if kind < 56:
        return {"call": "complete", "args": {"task_id": rng.choice(TASKS)}}
    if kind < 61:
        return {"call": "evaluate_preemption", "args": {"incoming_task_priority": rng.choice([2, 6, 10]),
                                                        "incoming_task_pool": rng.choice(POOLS),
                                                        "incoming_task_labels": rng.choice(LABELS),
                                                        "k": rng.randint(1, 4)}}
    if kind < 67:
        task = rng.choice(TASKS)
        args = {"task_id": task, "agent_name": task if rng.random() < 0.8 else rng.choice(AGENTS)}
        if rng.random() < 0.4:
            args["hold_for"] = rng.choice(TASKS)
        return {"call": "execute_preemption", "args": args}
    if kind < 71:
        fields = {"cancel_timeout": rng.choice([0.25, 1.5, 30]), "hold_timeout": rng.choice([0.9, 4, 30]),
                  "min_runtime_before_preemption": rng.choice([0, 0.6, 5]),
                  "enable_cross_pool_preemption": rng.random() < 0.6,
                  "remaining_time_weight": rng.choice([0, 0.01, 0.2]),
                  "protected_pools": rng.sample(POOLS, rng.randint(0, 1)),
                  "label_preemption_rules": rng.choice([{}, {"tier": {"gold": ["bronze"]}}])}
        picked = dict(rng.sample(sorted(fields.items()), rng.randint(1, 3)))
        if rng.random() < 0.2:
            picked["preemption_aggressiveness"] = rng.choice(["HIGH", "MEDIUM", "LOW"])
        return {"call": "update_preemption_policy", "args": picked}
    if kind < 74:
        return {"call": "hang_agent", "args": {"agent_name": rng.choice(AGENTS + TASKS)}}
    if kind < 76:
        return {"call": "ensure_agent_health", "args": {"timeout": rng.choice([0.5, 2, 10])}}
    if kind < 88:
        return {"call": "advance", "args": {"seconds": rng.choice([0, 0.1, 0.3, 1, 1.7, 4.25, 31])}}
    if kind < 91:
        return {"call": "register_state_handlers", "args": {"pool_name": rng.choice(POOLS),
                                                            "fail_preserve": rng.random() < 0.3}}
    if kind < 94:
        return {"call": "save_state", "args": {"path": "state-%d.json" % index}}
    if kind < 96:
        return {"call": "set_scheduling_strategy", "args": {"name": rng.choice(["binpack", "spread"])}}
    return {"call": rng.choice(["stats", "get_preemption_stats", "pg_pool_stats", "list_agents"])}


def script(seed):
    rng = random.Random(seed)
    nodes = [{"name": "n%d" % i, "resources": {"cpu": rng.choice([4, 8]), "memory": 16384, "gpu": rng.choice([0, 2, 4])},
              "labels": rng.choice(LABELS)} for i in range(rng.randint(1, 4))]
    steps = [step(rng, i) for i in range(rng.randint(20, 70))]
    # A state saved mid-way is loaded back near the end: the clock goes back to it.
    saves = [s["args"]["path"] for s in steps if s["call"] == "save_state"]
    if saves and rng.random() < 0.7:
        steps.append({"call": "load_state", "args": {"path": rng.choice(saves)}})
        steps.extend(step(rng, len(steps) + i) for i in range(5))
    steps.append({"call": "save_state", "args": {"path": "final.json"}})
    return {"nodes": nodes, "steps": steps}


def play(meshsim, workdir, seed):
    """What the script printed and every state file it wrote, as one text."""
    run_dir = workdir / str(seed)
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    (run_dir / "script.json").write_text(json.dumps(script(seed), indent=1))
    done = subprocess.run([meshsim, "scenario", "--check", "script.json"], cwd=run_dir, capture_output=True, text=True)
    parts = ["exit %d" % done.returncode, done.stdout, done.stderr]
    for path in sorted(run_dir.glob("*.json")):
        if path.name != "script.json":
            parts += ["== " + path.name, path.read_text()]
    return "\n".join(parts)


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main():
    meshsim, workdir = str(pathlib.Path(sys.argv[1]).resolve()), pathlib.Path(sys.argv[2]).resolve()
    record = "--record" in sys.argv[3:]
    digests, broken = {}, []
    for seed in range(SCRIPTS):
        text = play(meshsim, workdir, seed)
        (workdir / str(seed) / "output.txt").write_text(text)
        digests[str(seed)] = digest(text)
        if "invariant broken" in text:
            broken.append(str(seed))
    if broken:
        print("the core's invariants broke in seeds %s (see %s/SEED/output.txt)" % (", ".join(broken[:20]), workdir))
    if record:
        DIGESTS.write_text(json.dumps({"generator": GENERATOR, "digests": digests}, indent=0, sort_keys=True) + "\n")
        print("recorded %d digests in %s" % (len(digests), DIGESTS))
        return 0
    recorded = json.loads(DIGESTS.read_text())
    if recorded["generator"] != GENERATOR:
        print("the recorded digests are of generator %d, this is %d: record them again with the build that made them"
              % (recorded["generator"], GENERATOR))
        return 1
    if broken:
        return 1
    moved = [seed for seed in digests if recorded["digests"].get(seed) != digests[seed]]
    if moved:
        print("%d of %d scripts print or save something else than the recorded build did; seeds %s" %
              (len(moved), len(digests), ", ".join(moved[:20])))
        print("each run's script.json and output.txt are in %s/SEED" % workdir)
        return 1
    # The scripts reach what they are for: failures and successes of each kind, preemptions,
    # holds, hung agents and state loads (a generator that only fails tests nothing).
    outputs = "".join((workdir / s / "output.txt").read_text() for s in digests)
    for needle in ['"preempted":["', '"cancel_success":false', '"call":"load_state","result":{"success":true',
                   '"success":false', '"recreated_agents":["', '"pg_reused":true']:
        if needle not in outputs:
            print("no script reached %s: the generator has drifted from what it should exercise" % needle)
            return 1
    print("%d scripts print and save what the recorded build did" % len(digests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
