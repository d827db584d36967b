"""meshsim.replay from Python: the same summary and columns as `meshsim replay`'s run
folder, config overrides, tables as numpy or pandas, and clear errors."""
import csv
import json
import math
import subprocess
import threading

import numpy as np
import pytest

import meshsim

SHORT = {"run.until_s": 300}  # five simulated minutes of the default scenario


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def assert_same_table(table, path):
    header, rows = read_csv(path)
    assert list(table.dtype.names) == header
    assert len(table) == len(rows)
    for i, name in enumerate(header):
        column = table[name]
        for value, text in zip(column, (row[i] for row in rows)):
            if column.dtype.kind == "U":
                assert value == text
            elif text == "":
                assert (math.isnan(value) if column.dtype.kind == "f" else value == -1), name
            elif column.dtype.kind == "f":
                assert value == pytest.approx(float(text), abs=1e-6), name
            else:
                assert value == int(text), name


def test_a_replay_matches_the_run_folder_of_meshsim_replay(tmp_path, meshsim_bin):
    run = meshsim.replay(frames=False, overrides=SHORT)
    subprocess.run([meshsim_bin, "replay", "--until", "300", "--out", str(tmp_path), "--quiet"], check=True)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert run.summary == summary
    assert_same_table(run.requests, tmp_path / "requests.csv")
    assert_same_table(run.timeseries, tmp_path / "timeseries.csv")
    assert len(run.requests) > 1000
    assert run.summary["requests"]["arrived"] == len(run.requests)


def test_overrides_change_the_run_and_bad_ones_name_the_key():
    base = meshsim.replay(frames=False, overrides=SHORT)
    doubled = meshsim.replay(frames=False, overrides=SHORT, workload__rate_scale=2.0)
    assert doubled.summary["requests"]["arrived"] > 1.7 * base.summary["requests"]["arrived"]
    assert doubled.summary["config"]["workload"]["rate_scale"] == 2.0
    reseeded = meshsim.replay(frames=False, overrides=SHORT, seed=7)
    assert reseeded.summary["seed"] == 7
    assert not np.array_equal(reseeded.requests["arrival_s"], base.requests["arrival_s"])
    with pytest.raises(ValueError, match="tensor_parallel"):
        meshsim.replay(overrides=SHORT, serving__tensor_parallel="four")
    with pytest.raises(ValueError, match="no-such-file.json"):
        meshsim.replay("no-such-file.json")
    # A non-finite number is named as given (JSON has no NaN: it read "got null").
    for bad, shown in ((float("nan"), "got nan"), (float("inf"), "got inf"), (-float("inf"), "got -inf")):
        with pytest.raises(ValueError, match=f"workload.rate_scale: expected .*{shown}"):
            meshsim.replay(overrides=SHORT, workload__rate_scale=bad)
    # numpy's integers are integers (an integer key once read np.int64(7) as 7.0 and
    # refused it); numpy's bool is a bool; an integer past 64 bits names its key.
    assert meshsim.replay(frames=False, overrides=SHORT, seed=np.int64(7)).summary["seed"] == 7
    assert meshsim.replay(frames=False, overrides=SHORT, seed=np.uint32(7)).summary["seed"] == 7
    with pytest.raises(ValueError, match=r"run.until_s: 1000.* \(401 digits\) is beyond the 64-bit integers"):
        meshsim.replay(run__until_s=10**400)


def test_the_same_config_gives_identical_tables_in_parallel_threads():
    # The GIL is released while simulating: two threads replay at once, and each result
    # equals a replay run alone.
    alone = meshsim.replay(frames=False, overrides=SHORT, seed=3)
    results = [None, None]

    def work(i):
        results[i] = meshsim.replay(frames=False, overrides=SHORT, seed=3)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for result in results:
        assert result.summary == alone.summary
        for name in alone.requests.dtype.names:
            nan_is_equal = alone.requests[name].dtype.kind == "f"
            assert np.array_equal(result.requests[name], alone.requests[name], equal_nan=nan_is_equal), name


def test_classes_of_service_name_each_request_as_requests_csv_does(tmp_path, meshsim_bin, repo):
    scenario = str(repo / "configs" / "scenarios" / "two-classes.json")
    run = meshsim.replay(scenario, frames=False, overrides={"run.until_s": 120})
    subprocess.run([meshsim_bin, "replay", "--config", scenario, "--until", "120", "--out", str(tmp_path), "--quiet"],
                   check=True)
    assert_same_table(run.requests, tmp_path / "requests.csv")
    assert list(run.requests.dtype.names)[-1] == "class"
    by_class = {c["name"]: c["requests"]["arrived"] for c in run.summary["classes"]}
    assert set(by_class) == {"chat", "batch"}
    for name, arrived in by_class.items():
        assert (run.requests["class"] == name).sum() == arrived


def test_tables_are_dataframes_when_pandas_is_there():
    pandas = pytest.importorskip("pandas")
    run = meshsim.replay(frames=True, overrides=SHORT)
    assert isinstance(run.requests, pandas.DataFrame)
    assert list(run.timeseries.columns)[:3] == ["start_s", "end_s", "arrivals"]
    completed = run.requests[run.requests["status"] == "completed"]
    assert completed["ttft_s"].notna().all()
    assert run.timeseries["arrivals"].sum() == run.summary["requests"]["arrived"]


def test_a_real_trace_replays(shared):
    run = meshsim.replay(trace=str(shared / "traces" / "azure2023_conv.csv"), frames=False)
    assert run.summary["requests"]["arrived"] == 19366
    assert len(run.requests) == 19366
    assert set(np.unique(run.requests["status"])) <= {"completed", "dropped", "in_flight"}


def test_import_and_replay_load_neither_libtorch_nor_mpi():
    # A fresh interpreter: what `import meshsim` and a replay map into the process.
    code = (
        "import meshsim\n"
        "meshsim.replay(run__until_s=60)\n"
        "print(open('/proc/self/maps').read())\n"
    )
    import os
    import sys

    maps = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ)).stdout
    assert "libmeshsim" in maps or "_core" in maps  # the native module is mapped
    for heavy in ("libtorch", "libc10", "libmpi", "libgloo"):
        assert heavy not in maps, heavy


def test_ctrl_c_stops_a_long_replay_at_once():
    # A replay of millions of requests takes a minute; Ctrl-C (SIGINT) half a second in
    # must raise KeyboardInterrupt within a few seconds, not when the run ends (before,
    # Python saw the signal only once the native run returned).
    import os
    import signal
    import threading
    import time

    long_workload = {"arrivals": {"kind": "poisson", "rate_per_s": 5.5}, "prompt_tokens": {"kind": "fixed", "value": 200},
                     "output_tokens": {"kind": "fixed", "value": 50}, "requests": 20_000_000}
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        meshsim.replay(overrides={"workload.generator": long_workload})
    timer.cancel()
    assert time.monotonic() - started < 10, "the interrupt waited for the run to end"
