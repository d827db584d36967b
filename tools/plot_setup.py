"""What the plot scripts beside this file share: matplotlib, whichever python3 runs them,
and reading their CSV files.

`python3 tools/plot.py` runs the first python3 on PATH, which may be a pyenv, conda or
virtual-environment interpreter without matplotlib while Debian's python3-matplotlib is
installed for /usr/bin/python3: the script is then run again under /usr/bin/python3.
"""
import csv
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"
_RERUN = "MESHSIM_PLOT_RERUN"


def pyplot(script):
    """matplotlib.pyplot on the Agg backend, or None after saying which interpreters lack it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        pass
    tried = [sys.executable]
    # Not by the binary's real path: a virtual environment's python is Debian's binary
    # with its own packages.
    if os.environ.get(_RERUN) is None and os.access(DEBIAN_PYTHON, os.X_OK) and sys.executable != DEBIAN_PYTHON:
        os.environ[_RERUN] = sys.executable or "?"
        sys.stdout.flush()
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    if os.environ.get(_RERUN):
        tried.insert(0, os.environ[_RERUN])
    print(f"{script}: matplotlib is not importable by {' nor by '.join(tried)} "
          f"(install Debian's python3-matplotlib: apt-get install python3-matplotlib)", file=sys.stderr)
    return None


def read_csv(path):
    """The rows of a CSV file with a header line, each a dict (OSError when unreadable)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
