#!/bin/sh
# tools/plot.py as the README runs it ("python3 tools/plot.py") under an interpreter that
# has no matplotlib (a virtual environment without system packages, as a pyenv or conda
# python3 first on PATH would be): it runs again under Debian's python3 and draws.
# Usage: plot_any_python_test.sh SOURCE_DIR RUN_DIR WORK_DIR. Exit 77 (skip) without
# python3-venv or without Debian's python3-matplotlib.
set -eu
source_dir=$1 run_dir=$2 work=$3
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || exit 77
rm -rf "$work"
/usr/bin/python3 -m venv --without-pip "$work/venv" 2>/dev/null || exit 77
if "$work/venv/bin/python" -c "import matplotlib" 2>/dev/null; then
  echo "the test's virtual environment unexpectedly has matplotlib" >&2
  exit 1
fi
"$work/venv/bin/python" "$source_dir/tools/plot.py" "$run_dir" --out "$work/png"
test -s "$work/png/latency_cdf.png"
echo "drawn by a python3 without matplotlib"
