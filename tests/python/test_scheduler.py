"""meshsim.Scheduler from Python: the scenario scripts' calls, arguments and results."""
import json
import subprocess

import pytest

import meshsim

NODES = {"nodes": [{"name": "n1", "resources": {"cpu": 64, "memory": 262144, "gpu": 8}, "labels": {}}]}


def test_calls_give_the_scripts_results(tmp_path, meshsim_bin):
    # The same calls as a script and from Python: the same result objects, line by line.
    steps = [
        ("create_pool", {"name": "train", "resources": {"cpu": 32, "memory": 131072, "gpu": 8}, "target_agents": 2}),
        ("create_pool", {"name": "serve", "resources": {"cpu": 32, "memory": 131072, "gpu": 8}, "target_agents": 2}),
        ("submit_task_with_preemption", {"task_id": "low", "pool_name": "train", "priority": 1,
                                         "resources": {"cpu": 4, "gpu": 8}}),
        ("advance", {"seconds": 30}),
        ("submit_task_with_preemption", {"task_id": "high", "pool_name": "serve", "priority": 10,
                                         "resources": {"cpu": 4, "gpu": 8}}),
        ("get_preemption_stats", {}),
        ("stats", {}),
    ]
    script = dict(NODES, steps=[{"call": name, "args": args} for name, args in steps])
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    printed = subprocess.run([meshsim_bin, "scenario", str(path)], check=True, capture_output=True, text=True).stdout
    expected = [json.loads(line)["result"] for line in printed.splitlines()]

    sched = meshsim.Scheduler(NODES)
    got = [getattr(sched, name)(**args) for name, args in steps]
    assert got == expected
    assert sched.time == 30
    assert sched.check_invariants() == []
    assert "schedulemesh_" in sched.prometheus_text()


def test_a_refused_call_is_a_result_and_a_bad_one_raises():
    sched = meshsim.Scheduler()
    refused = sched.submit_task_with_preemption(task_id="t", pool_name="none", priority=1, resources={"cpu": 1})
    assert refused["success"] is False
    with pytest.raises(ValueError, match="priority"):
        sched.submit_task_with_preemption(task_id="t", pool_name="none", resources={"cpu": 1})
    with pytest.raises(AttributeError, match="no call 'launch'"):
        sched.launch()
    with pytest.raises(ValueError, match="unknown call"):
        sched.call("launch")
    assert "create_pool" in dir(sched)


def test_serving_calls_need_a_serving_setup(repo):
    with pytest.raises(ValueError, match="serving"):
        meshsim.Scheduler().get_status_summary()
    script = json.loads((repo / "experiments" / "scenarios" / "e1_elastic_load.json").read_text())
    setup = {key: script[key] for key in ("nodes", "serving", "scaling") if key in script}
    sched = meshsim.Scheduler(setup)
    before = sched.get_status_summary()
    assert before["success"] is True
    sched.submit_requests(count=10, prompt_tokens=500, output_tokens=50)
    sched.advance(seconds=120)
    assert sched.get_request_counts()["completed"] == 10


def test_every_call_is_a_method_with_its_summary():
    sched = meshsim.Scheduler()
    assert "advance" in meshsim.Scheduler.calls and "submit_requests" in meshsim.Scheduler.calls
    for name in meshsim.Scheduler.calls:
        doc = getattr(sched, name).__doc__
        assert doc.startswith(f"{name}(**args): ") and len(doc) > len(name) + 20, doc
    assert "clock" in sched.advance.__doc__
