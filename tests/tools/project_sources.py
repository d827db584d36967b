"""The project's C++ sources the source checks read (tests and experiments aside: they may use anything)."""
import pathlib

CODE_ROOTS = ("sim", "traces", "scheduler", "configs", "rl", "tools")


def cpp_files(folder):
    """Every .cpp, .hpp and .h file under `folder`, in path order, build folders left out."""
    for source in sorted(pathlib.Path(folder).rglob("*")):
        if source.suffix in (".cpp", ".hpp", ".h") and "build" not in source.parts:
            yield source


def project_sources(repo):
    """(file, its path relative to `repo`) for every source under the code roots."""
    for root in CODE_ROOTS:
        for source in cpp_files(repo / root):
            yield source, source.relative_to(repo).as_posix()
