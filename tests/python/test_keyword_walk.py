"""Every keyword of every Python entry point is used or refused: the Python half of the
command line's option walk (tests/tools/option_walk_test.py). For each keyword, a value of
the wrong kind raises TypeError or ValueError naming the keyword (never a truthy 'no', a
number taken as a file name, or pybind11's "Unable to cast"), and a right value other than
the default changes what is played. The walk reads the keywords from the signatures, so a
keyword added without a case fails it."""
import inspect
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import numpy as np
import pytest

import meshsim

SHORT = {"rl.episode_s": 60, "rl.decision_interval_s": 15}  # 4 decisions an episode


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small recipe (short episodes, one short test window), a variant of it, a scenario
    with another seed and a trace, shared by the cases."""
    folder = tmp_path_factory.mktemp("walk")
    with open(meshsim.default_training_path()) as f:
        recipe = json.load(f)
    recipe["rl"].update({"episode_s": 60, "decision_interval_s": 15, "windows_to_s": 3600,
                         "validation": [[4200, 4320]], "test": [[4800, 4920]], "tuning_windows": 1})
    (folder / "recipe.json").write_text(json.dumps(recipe))
    recipe["seed"] += 1
    recipe["rl"].update({"episode_s": 120})
    (folder / "recipe2.json").write_text(json.dumps(recipe))
    with open(meshsim.default_scenario_path()) as f:
        scenario = json.load(f)
    scenario["seed"] += 1
    scenario["workload"]["generator"] = os.path.join(os.path.dirname(meshsim.default_scenario_path()), scenario["workload"]["generator"])
    (folder / "scenario.json").write_text(json.dumps(scenario))
    rows = "".join(f"2023-11-16 {t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d},{500 + t % 700},{50 + t % 90}\n"
                   for t in range(0, 7200, 2))
    (folder / "trace.csv").write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + rows)
    return folder


# What each entry point plays, reduced to something two calls can be compared by.
def play_replay(files, **kw):
    kw.setdefault("overrides", {"run.until_s": 20})
    result = meshsim.replay(**kw)
    summary = {k: v for k, v in result.summary.items() if k != "config"}
    return type(result.requests).__name__, json.dumps(summary, sort_keys=True)


def play_env(cls, files, reset=None, **kw):
    kw.setdefault("config", files / "recipe.json")
    vector = cls is meshsim.VectorEnv
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        env = cls(**{"num_envs": 2, **kw}) if vector else cls(**kw)
    obs, _ = env.reset(**{"seed": 3, **(reset or {})})
    seen = [obs.tobytes()]
    # A vector steps past the episode's end, where its autoreset shows.
    for _ in range(env.steps_per_episode + vector):
        obs, *_ = env.step(np.full(env.action_space.shape, 3))
        seen.append(obs.tobytes())
    used = (env.steps_per_episode, getattr(env, "threads", None), env.metadata.get("autoreset_mode"),
            None if vector else env.render(), [str(w.message) for w in warned])
    env.close()
    return used, seen


def play_evaluate(files, capsys=None, **kw):
    kw = {"policy": lambda obs: [3], "config": files / "recipe.json", "out": files / "eval", "delays": [10],
          "window_start_s": 4800, "window_s": 120,
          "max_static": 4, "grids": {"rate_targets": [2]}, "quiet": True, **kw}
    result = meshsim.evaluate(**kw)
    printed = capsys.readouterr().out if capsys else ""
    columns = ("window", "window_start_s", "window_s", "rate_scale", "delay_s", "policy", "parameter",
               "slo_attainment", "gpu_hours")
    return result.out, bool(printed), [(v["policy"], v["slo_attainment"]) for v in result.verdicts], \
        [{k: p[k] for k in columns} for p in result.plays]


def play_scheduler(files, **kw):
    sched = meshsim.Scheduler(**kw)
    saved = sched.save_state(path=str(files / "state.json"))
    return json.dumps(sched.stats(), sort_keys=True), saved["success"]


@dataclass
class Case:
    wrong: Any                      # a value of the wrong kind: refused naming the keyword
    value: Callable[[Any], Any]     # files -> a right value other than the default
    error: type = TypeError
    base: dict = field(default_factory=dict)  # other keywords, in both calls of the changes case


PATH_WRONG = 5  # a number is not the file named '5'
ENTRY_POINTS = {
    "replay": (meshsim.replay, play_replay, {
        "config": Case(PATH_WRONG, lambda f: f / "scenario.json"),
        "trace": Case(PATH_WRONG, lambda f: f / "trace.csv"),
        "frames": Case("no", lambda f: False),
        "overrides": Case([("seed", 2)], lambda f: {"run.until_s": 20, "seed": 9}),
    }),
    "ScalingEnv": (meshsim.ScalingEnv.__init__, lambda f, **kw: play_env(meshsim.ScalingEnv, f, **kw), {
        "config": Case(PATH_WRONG, lambda f: f / "recipe2.json"),
        "trace": Case(PATH_WRONG, lambda f: f / "trace.csv"),
        "overrides": Case(5, lambda f: {"rl.episode_s": 30}),
        "render_mode": Case(5, lambda f: "ansi"),
    }),
    "ScalingEnv.reset": (meshsim.ScalingEnv.reset,
                         lambda f, **kw: play_env(meshsim.ScalingEnv, f, reset=kw), {
        "seed": Case("3", lambda f: 4),
        "options": Case([("rate_scale", 2)], lambda f: {"rate_scale": 3.0}),
    }),
    "VectorEnv": (meshsim.VectorEnv.__init__, lambda f, **kw: play_env(meshsim.VectorEnv, f, **kw), {
        "num_envs": Case(1.5, lambda f: 3),
        "config": Case(PATH_WRONG, lambda f: f / "recipe2.json"),
        "trace": Case(PATH_WRONG, lambda f: f / "trace.csv"),
        "threads": Case(1.5, lambda f: 1),
        "overrides": Case(5, lambda f: {"rl.episode_s": 30}),
        "autoreset_mode": Case("next", lambda f: gym.vector.AutoresetMode.NEXT_STEP, ValueError),
        "max_episode_steps": Case(1.5, lambda f: 2),
    }),
    "VectorEnv.reset": (meshsim.VectorEnv.reset, lambda f, **kw: play_env(meshsim.VectorEnv, f, reset=kw), {
        "seed": Case(3.0, lambda f: 4),
        "options": Case(5, lambda f: {"start_instances": 2}),
    }),
    "evaluate": (meshsim.evaluate, play_evaluate, {
        "policy": Case(5, lambda f: (lambda obs: [4])),
        "config": Case(PATH_WRONG, lambda f: f / "recipe2.json"),  # another seed
        "out": Case(PATH_WRONG, lambda f: f / "eval2"),
        "delays": Case("10", lambda f: [60]),
        "name": Case(5, lambda f: "mine"),
        "split": Case(5, lambda f: "validation", base={"window_start_s": None, "window_s": None}),
        "window_start_s": Case("4900", lambda f: 4900),
        "window_s": Case("60", lambda f: 60),
        "rate_scale": Case("2", lambda f: 2),
        "max_static": Case(2.5, lambda f: 3),
        "grids": Case([("rate_targets", [3])], lambda f: {"rate_targets": [3]}),
        "quiet": Case("no", lambda f: False),
    }),
    "Scheduler": (meshsim.Scheduler.__init__, play_scheduler, {
        "setup": Case(5, lambda f: {"nodes": [{"name": "n1", "resources": {"cpu": 64, "memory": 262144, "gpu": 8},
                                                "labels": {}}]}),
        "allow_files": Case("no", lambda f: False),
    }),
}
CASES = [(entry, keyword) for entry, (_, _, cases) in ENTRY_POINTS.items() for keyword in cases]


def keywords(function):
    return [p.name for p in inspect.signature(function).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def test_every_keyword_of_every_entry_point_has_a_case():
    for entry, (function, _, cases) in ENTRY_POINTS.items():
        assert sorted(keywords(function)) == sorted(cases), entry


@pytest.mark.parametrize("entry,keyword", CASES)
def test_a_value_of_the_wrong_kind_is_refused_naming_the_keyword(entry, keyword, files):
    _, play, cases = ENTRY_POINTS[entry]
    case = cases[keyword]
    with pytest.raises(case.error) as raised:
        play(files, **{keyword: case.wrong})
    assert keyword in str(raised.value), str(raised.value)
    assert "Unable to cast" not in str(raised.value)


@pytest.mark.parametrize("entry,keyword", CASES)
def test_a_right_value_changes_what_is_played(entry, keyword, files, capsys):
    if keyword == "threads" and (os.cpu_count() or 1) < 2:
        pytest.skip("one core: threads=1 is the default")
    _, play, cases = ENTRY_POINTS[entry]
    extra = {"capsys": capsys} if entry == "evaluate" else {}
    case = cases[keyword]
    base = play(files, **extra, **case.base)
    changed = play(files, **extra, **{**case.base, keyword: case.value(files)})
    assert changed != base, f"{entry}({keyword}=...) played as without it"
