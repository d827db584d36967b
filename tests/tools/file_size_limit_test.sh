#!/usr/bin/env bash
# A file-size limit (ulimit -f) is an output error: every writer ends with exit 3 naming
# the file, never killed by SIGXFSZ (exit 153), and leaves no temporary file behind.
# Usage: file_size_limit_test.sh MESHSIM WORKDIR
set -euo pipefail
meshsim=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
grid="$work/grid.json"
echo '{"grid": {"run.until_s": [300, 600]}}' > "$grid"
status=0
limited() {  # limited NAME ARGS...: meshsim ARGS under a 40 KiB file-size limit
  local name=$1; shift
  set +e
  (ulimit -f 40; "$meshsim" "$@") > "$work/$name.out" 2> "$work/$name.err"
  local code=$?
  set -e
  if [ "$code" != 3 ]; then echo "FAIL: meshsim $*: exit $code, expected 3"; cat "$work/$name.err"; status=1; fi
  if find "$work/$name" -name "*.tmp" 2>/dev/null | grep -q .; then
    echo "FAIL: meshsim $*: left temporary files:"; find "$work/$name" -name '*.tmp'; status=1
  fi
}
limited replay replay --until 600 --quiet --out "$work/replay"
limited sweep sweep "$grid" --quiet --threads 1 --out "$work/sweep"
limited presets compare-presets --until 600 --no-plot --out "$work/presets"
[ "$status" = 0 ] && echo "a file-size limit: exit 3 and no temporary file from each writer"
exit $status
