#!/usr/bin/env bash
# A plot that cannot be written (here a file-size limit the PNG passes and the CSV does
# not) is an output error, exit 3 naming the PNG, never "needs python3-matplotlib" with
# exit 0; and no partial PNG is left. Exit 77 (skip) without python3-matplotlib.
# Usage: unwritable_plot_test.sh MESHSIM WORKDIR
set -euo pipefail
meshsim=$1 work=$2
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || exit 77
rm -rf "$work" && mkdir -p "$work"
set +e
(trap '' XFSZ; ulimit -f 8; "$meshsim" capacity --until 120 --out "$work/cap") > "$work/out" 2> "$work/err"
code=$?
set -e
if [ "$code" != 3 ]; then echo "capacity with an unwritable plot: exit $code, expected 3"; cat "$work/err"; exit 1; fi
grep -q "capacity.png: could not be written" "$work/err" || { echo "the error does not name the PNG:"; cat "$work/err"; exit 1; }
if grep -q "needs python3-matplotlib" "$work/err"; then echo "blamed on matplotlib:"; cat "$work/err"; exit 1; fi
test -s "$work/cap/capacity.csv" || { echo "the CSV, which fits, is missing"; exit 1; }
test ! -e "$work/cap/capacity.png" || { echo "a partial capacity.png was left"; exit 1; }
echo "an unwritable plot: exit 3 naming it, no partial PNG"
