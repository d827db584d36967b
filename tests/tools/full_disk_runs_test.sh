#!/usr/bin/env bash
# Run folders that cannot be written (a full disk, here a file-size limit: writes past it
# fail with EFBIG) end `meshsim sweep` and `meshsim compare-presets` with exit 3 (an output
# error, not bad input) and a message naming the file, leaving no temporary file behind.
# Usage: full_disk_runs_test.sh MESHSIM WORKDIR
set -euo pipefail
meshsim=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
printf '{"grid": {"serving.start_state.0.count": [2, 3]}, "list": [{"run.until_s": 300}]}' > "$work/grid.json"
limited() {  # limited NAME ARGS...: the command where no file may pass 40 KiB (requests.csv grows past it)
  local name=$1
  shift
  set +e
  (trap '' XFSZ; ulimit -f 40; "$meshsim" "$@") > "$work/$name.out" 2> "$work/$name.err"
  local code=$?
  set -e
  if [ "$code" != 3 ]; then echo "$name on a full disk: exit $code, expected 3"; cat "$work/$name.err"; exit 1; fi
  grep -q "requests.csv.tmp: write failed" "$work/$name.err" ||
    { echo "$name: the failure does not name the file:"; cat "$work/$name.err"; exit 1; }
  if find "$work/$name" -name '*.tmp' | grep -q .; then echo "$name left temporary files"; exit 1; fi
}
limited presets compare-presets --until 600 --no-plot --out "$work/presets"
limited sweep sweep "$work/grid.json" --out "$work/sweep"
echo "a full disk under sweep and compare-presets: exit 3 naming the file, no temporary left"
