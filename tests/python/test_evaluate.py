"""meshsim.evaluate: a policy written in Python is judged by meshsim eval's own run. A
checkpoint trained by `meshsim train`, its weights played from Python with numpy, gets the
figures `meshsim eval --policy` gives the checkpoint, to the printed digit."""
import json
import subprocess
import warnings

import numpy as np
import pytest

import meshsim

torch = pytest.importorskip("torch", reason="reading a checkpoint's weights needs PyTorch")

GRIDS = {"kv_targets": [0.7], "request_targets": [16], "rate_targets": [2], "token_targets": [3000],
         "elastic_capacities": [32], "oracle_utilisations": [0.5, 0.9], "bound_utilisations": [0.6, 0.9]}


def small_recipe(folder):
    with open(meshsim.default_training_path()) as f:
        recipe = json.load(f)
    recipe["rl"].update({"episode_s": 300, "windows_to_s": 3600, "validation": [[4200, 4500]],
                         "test": [[4800, 5400]], "tuning_windows": 2})
    recipe["rl"]["ppo"].update({"num_envs": 4, "rollout_steps": 32})
    path = folder / "recipe.json"
    path.write_text(json.dumps(recipe))
    return path


def numpy_policy(checkpoint):
    """The checkpoint's deterministic policy in numpy: observations normalised by its
    frozen statistics, the actor MLP (tanh), the most likely choice of each pool."""
    state = json.loads((checkpoint / "state.json").read_text())
    with warnings.catch_warnings():  # torch.jit.load reads LibTorch's format; newer torch calls it deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.load(str(checkpoint / "policy.pt"))
    weights = {k: v.numpy() for k, v in module.state_dict().items()}
    stats = state["observation_stats"]
    mean, scale = np.asarray(stats["mean"]), np.sqrt(np.asarray(stats["var"]) + 1e-8)
    clip = state["observation_clip"]
    choices = 2 * state["rl"]["discrete_max_step"] + 1  # the recipe's discrete actions: -k..k
    layers = sorted({int(k.split(".")[1]) for k in weights if k.startswith("actor.")})

    def act(obs):
        x = np.clip((obs.astype(np.float64) - mean) / scale, -clip, clip).astype(np.float32)
        for i, layer in enumerate(layers):
            x = weights[f"actor.{layer}.weight"] @ x + weights[f"actor.{layer}.bias"]
            if i + 1 < len(layers):
                x = np.tanh(x)
        return np.argmax(x.reshape(-1, choices), axis=1)

    return act


def test_a_checkpoint_played_from_python_gets_the_commands_figures(tmp_path, meshsim_bin):
    recipe = small_recipe(tmp_path)
    run = tmp_path / "run"
    subprocess.run([meshsim_bin, "train", "--config", str(recipe), "--out", str(run), "--total-decisions", "256",
                    "--quiet", "--no-plot"], check=True)
    # Every grid Python accepts, the capacity model's among them.
    model = tmp_path / "capacity_model.json"
    model.write_text(json.dumps({"format": 1, "features": "tokens",
                                 "sizes": [{"instances": 1, "seconds_per_request": [0.05, 0.3]}]}))
    grids = dict(GRIDS, multi_metric_scales=[1.0, 1.25], bound_prices=4, capacity_targets=[0.8, 1.2],
                 capacity_model=model)
    grid_flags = []
    for key, values in grids.items():
        text = ",".join(str(v) for v in values) if isinstance(values, list) else str(values)
        grid_flags += ["--" + key.replace("_", "-"), text]
    command_out = tmp_path / "command"
    printed = subprocess.run([meshsim_bin, "eval", "--policy", str(run / "checkpoint"), "--config", str(recipe),
                              "--out", str(command_out), "--delays", "10,60", "--max-static", "16", "--no-plot"]
                             + grid_flags, check=True, capture_output=True, text=True).stdout

    result = meshsim.evaluate(numpy_policy(run / "checkpoint"), config=str(recipe), out=tmp_path / "python",
                              delays=[10, 60], name="ppo", max_static=16, grids=grids, quiet=True)
    # The same text but for the output folder's name.
    assert result.text == printed.replace(str(command_out), str(tmp_path / "python"))
    for name in ("eval.csv", "verdicts.csv", "tuning.csv", "instances.csv"):
        assert (tmp_path / "python" / name).read_text() == (command_out / name).read_text(), name
    judged = [v["policy"] for v in result.verdicts]
    assert judged.count("ppo") == 2 and judged.count("capacity_tracking") == 2, judged
    assert judged.count("capacity_tracking_corrected") == 2, judged


def test_ctrl_c_is_pythons_again_after_an_evaluation(tmp_path):
    # An evaluation writes files the command removes on SIGINT; the handler that does so
    # passes the signal on, so Python still raises KeyboardInterrupt (it ended the
    # interpreter before).
    import os
    import signal
    import time

    meshsim.evaluate(lambda obs: [2], config=str(small_recipe(tmp_path)), out=tmp_path / "eval", delays=[10],
                     max_static=16, grids=GRIDS, quiet=True)
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)


def test_a_policy_that_fails_raises_its_error(tmp_path):
    recipe = small_recipe(tmp_path)

    def broken(obs):
        raise ZeroDivisionError("the policy's own bug")

    with pytest.raises(ZeroDivisionError, match="the policy's own bug"):
        meshsim.evaluate(broken, config=str(recipe), out=tmp_path / "broken", delays=[10], max_static=16, grids=GRIDS,
                         quiet=True)
    with pytest.raises(ValueError, match="expected an action of 1 numbers"):
        meshsim.evaluate(lambda obs: [1, 2], config=str(recipe), out=tmp_path / "wrong", delays=[10], max_static=16,
                         grids=GRIDS, quiet=True)


def test_capacity_targets_without_a_capacity_model_are_refused(tmp_path, meshsim_bin):
    # They would be accepted and never played.
    run = subprocess.run([meshsim_bin, "eval", "--config", str(small_recipe(tmp_path)), "--out", str(tmp_path / "e"),
                          "--capacity-targets", "1"], capture_output=True, text=True)
    assert run.returncode == 2 and "--capacity-model" in run.stderr, run.stderr


def test_an_evaluation_that_does_not_hold_writes_nothing(tmp_path):
    # A policy that raised, or acted as env.step would refuse, gets no outputs; an earlier
    # evaluation's in the same folder stay as they were.
    recipe = small_recipe(tmp_path)
    out = tmp_path / "eval"
    meshsim.evaluate(lambda obs: np.array([2]), config=str(recipe), out=out, delays=[10], max_static=16,
                     grids=GRIDS, quiet=True)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = []

    def raises_late(obs):
        calls.append(1)
        if len(calls) == 21:
            raise KeyError("the 21st call")
        return np.array([2])

    for policy, error, match in ((raises_late, KeyError, "the 21st call"),
                                 (lambda obs: np.array([7]), ValueError, r"action: expected 1 integers in \[0, 4\]"),
                                 (lambda obs: np.array([np.nan]), ValueError, "action: expected 1 integers"),
                                 (lambda obs: "abc", ValueError, "action: expected 1 integers")):
        with pytest.raises(error, match=match):
            meshsim.evaluate(policy, config=str(recipe), out=out, delays=[10], max_static=16, grids=GRIDS,
                             quiet=True)
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".meshsim-evaluate-")]


def test_arguments_are_taken_as_they_are_or_refused_naming_them(tmp_path):
    # Refused before anything plays: a string is not a list of delays ('10' once played
    # 1 s and 0 s), 1.9 not a count, '2' not a number, a bool not a delay.
    recipe = str(small_recipe(tmp_path))
    for kwargs, error, match in (({"delays": "10"}, TypeError, "delays: expected a list of numbers, got '10'"),
                                 ({"delays": [True]}, TypeError, r"delays\[0\]: expected a number, got True"),
                                 ({"delays": [-1]}, ValueError, r"delays\[0\]: expected a finite number"),
                                 ({"max_static": 1.9}, TypeError, "max_static: expected an integer, got 1.9"),
                                 ({"max_static": "5"}, TypeError, "max_static: expected an integer"),
                                 ({"rate_scale": "2"}, TypeError, "rate_scale: expected a number, got '2'"),
                                 ({"window_s": float("nan")}, ValueError, "window_s: expected a finite number"),
                                 ({"grids": {"rate_targets": ["x"]}}, TypeError,
                                  r"grids\['rate_targets'\]\[0\]: expected a number, got 'x'"),
                                 ({"grids": {"rate_targets": 4}}, TypeError,
                                  r"grids\['rate_targets'\]: expected a list of numbers"),
                                 ({"grids": {"bound_prices": 2.5}}, TypeError, r"grids\['bound_prices'\]"),
                                 # (the recipe's spans are not played beside a window)
                                 ({"split": "validation", "window_start_s": 4800}, ValueError, "split validation")):
        with pytest.raises(error, match=match):
            meshsim.evaluate(lambda obs: [2], config=recipe, out=tmp_path / "never", quiet=True, **kwargs)
    assert not (tmp_path / "never").exists()
    # numpy's numbers are numbers.
    meshsim.evaluate(lambda obs: np.array([2]), config=recipe, out=tmp_path / "numpy", delays=np.array([10.0]),
                     max_static=np.int64(16), rate_scale=np.float32(1), grids=GRIDS, quiet=True)
