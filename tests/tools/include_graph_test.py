#!/usr/bin/env python3
"""The include graph follows the dependency rules the folders' READMEs state.

Each README says, on lines of the form

    - `sim/cluster` may include: `sim/engine`, `sim/metrics`, `scheduler`, `traces`.

which other folders' headers the code of a folder may include (`nothing` for none), and
on lines of the form

    - `configs` may include of `sim/cluster`, `sim/autoscale` only: `*_options.hpp`, `*_config.hpp`.

which headers (by name, shell patterns) of those folders alone, and on lines of the form

    - `sim` may not include: `<fstream>`.

which system headers no code under a folder may include, and on lines of the form

    - `fleet()` may be called only in: `sim/cluster`.

which folders' code alone may call an accessor, and on lines of the form

    - `experiments/bench` may not include from: `tools/cli`, `tests`.

which folders' headers a folder outside the rules (experiments) may not include. This test reads every rule, then every #include "..." of the project's sources (tests and
experiments aside: they may use anything), and fails naming each file and line whose
include runs against a rule, and each folder with code but no rule. The rules themselves
must be layers: no folder may include, directly or through others, a folder that may
include it (the cycle is named), so no two folders' code ever includes each other.

Usage: include_graph_test.py REPO
"""
import fnmatch
import pathlib
import re
import sys

from project_sources import CODE_ROOTS, cpp_files, project_sources

RULE = re.compile(r"^(?:- )?`([\w/]+)` may include: (.*)$")
ONLY = re.compile(r"^(?:- )?`([\w/]+)` may include of (.*) only: (.*)$")
FORBIDDEN = re.compile(r"^(?:- )?`([\w/]+)` may not include: (.*)$")
NOT_FROM = re.compile(r"^(?:- )?`([\w/]+)` may not include from: (.*)$")
CALLED_ONLY = re.compile(r"^(?:- )?`(\w+)\(\)` may be called only in: (.*)$")
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s+(<[^>]+>)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
READMES = ("sim/README.md", "traces/README.md", "scheduler/README.md", "configs/README.md", "rl/README.md",
           "tools/README.md")


def rule_matches(repo, pattern):
    """(README name, match) for each line of the folders' READMEs that `pattern` matches."""
    for name in READMES:
        for line in (repo / name).read_text().splitlines():
            match = pattern.match(line.strip())
            if match:
                yield name, match


def read_only_rules(repo):
    """(folder, other folder) -> the header name patterns the folder may include from it."""
    only = {}
    for _, match in rule_matches(repo, ONLY):
        unit, folders, patterns = match.groups()
        for other in re.findall(r"`([\w/]+)`", folders):
            only[(unit, other)] = re.findall(r"`([^`]+)`", patterns)
    return only


def read_forbidden(repo):
    """folder -> the system headers no code under it may include."""
    return {match.group(1): set(re.findall(r"`(<[^>`]+>)`", match.group(2)))
            for _, match in rule_matches(repo, FORBIDDEN)}


def read_called_only(repo):
    """accessor name -> the folders whose code alone may call it."""
    return {match.group(1): re.findall(r"`([\w/]+)`", match.group(2).split(" (")[0])
            for _, match in rule_matches(repo, CALLED_ONLY)}


def read_rules(repo):
    rules = {}
    for name, match in rule_matches(repo, RULE):
        unit, allowed = match.groups()
        if unit in rules:
            sys.exit(f"{name}: a second rule for `{unit}`")
        rules[unit] = set() if allowed.strip().rstrip(".") == "nothing" else set(re.findall(r"`([\w/]+)`", allowed))
    return rules


def rule_cycle(rules):
    """A cycle of folders the rules let include each other ([a, b, ..., a]), or None."""
    state = {}  # folder -> "open" while on the path, "done" once every folder below it is
    path = []

    def visit(unit):
        state[unit] = "open"
        path.append(unit)
        for other in sorted(rules.get(unit, ())):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            if other not in state:
                found = visit(other)
                if found:
                    return found
        path.pop()
        state[unit] = "done"
        return None

    for unit in sorted(rules):
        if unit not in state:
            found = visit(unit)
            if found:
                return found
    return None


def unit_of(path, units):
    """The longest rule folder that holds `path` (a path relative to the repository)."""
    best = None
    for unit in units:
        if path == unit or path.startswith(unit + "/"):
            if best is None or len(unit) > len(best):
                best = unit
    return best


def main():
    repo = pathlib.Path(sys.argv[1]).resolve()
    rules = read_rules(repo)
    only = read_only_rules(repo)
    forbidden = read_forbidden(repo)
    called_only = {name: (re.compile(r"[.>]" + name + r"\(\)"), folders)
                   for name, folders in read_called_only(repo).items()}
    if not rules:
        sys.exit("no dependency rules found in the folders' READMEs")
    units = set(rules)
    for unit, allowed in rules.items():
        for other in allowed - units:
            print(f"`{unit}` may include `{other}`, which has no rule of its own")
    problems = []
    cycle = rule_cycle(rules)
    if cycle:
        problems.append("the folders' rules are not layers: " + " -> ".join(f"`{u}`" for u in cycle)
                        + " may include each other")
    files = 0
    for source, relative in project_sources(repo):
        files += 1
        here = unit_of(relative, units)
        if here is None:
            problems.append(f"{relative}: its folder has no dependency rule in a README")
            continue
        banned = set().union(*(headers for folder, headers in forbidden.items()
                               if relative.startswith(folder + "/")))
        for number, line in enumerate(source.read_text().splitlines(), 1):
            for name, (call, folders) in called_only.items():
                allowed = any(relative.startswith(folder + "/") for folder in folders)
                if not allowed and call.search(line.split("//")[0]):
                    problems.append(f"{relative}:{number}: calls {name}(), which only code in "
                                    + ", ".join(f"`{f}`" for f in folders) + " may call")
            system = SYSTEM_INCLUDE.match(line)
            if system and system.group(1) in banned:
                problems.append(f"{relative}:{number}: includes {system.group(1)}, which no code under it may")
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            there = unit_of(target, units)
            if there is None:
                if target.split("/")[0] in CODE_ROOTS + ("tests", "experiments"):
                    problems.append(f"{relative}:{number}: includes {target}, in no folder with a rule")
                continue  # a system or third-party header
            if there != here and there not in rules[here]:
                problems.append(f"{relative}:{number}: includes {target}, but `{here}` may include only "
                                + (", ".join(f"`{u}`" for u in sorted(rules[here])) or "nothing"))
            elif (here, there) in only and not any(
                    fnmatch.fnmatch(pathlib.PurePosixPath(target).name, p) for p in only[(here, there)]):
                problems.append(f"{relative}:{number}: includes {target}, but `{here}` may include of `{there}` "
                                "only " + ", ".join(f"`{p}`" for p in only[(here, there)]))
    for _, match in rule_matches(repo, NOT_FROM):
        folder, banned = match.group(1), re.findall(r"`([\w/]+)`", match.group(2))
        for source in cpp_files(repo / folder):
            files += 1
            relative = source.relative_to(repo).as_posix()
            for number, line in enumerate(source.read_text().splitlines(), 1):
                match_include = INCLUDE.match(line)
                if match_include and any(match_include.group(1).startswith(b + "/") for b in banned):
                    problems.append(f"{relative}:{number}: includes {match_include.group(1)}, but `{folder}` may not "
                                    "include from " + ", ".join(f"`{b}`" for b in banned))
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"{len(problems)} include(s) against the folders' dependency rules")
    print(f"{files} files follow the dependency rules of {len(rules)} folders")


if __name__ == "__main__":
    main()
