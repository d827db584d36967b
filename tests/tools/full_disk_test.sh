#!/usr/bin/env bash
# A checkpoint that cannot be written (a full disk, here a file-size limit: writes past it
# fail with EFBIG) ends `meshsim train` with exit 3 and a message naming the file, never an
# abort; the previous checkpoint stays whole and the run resumes from it once there is
# room.
# Usage: full_disk_test.sh MESHSIM WORKDIR
set -euo pipefail
meshsim=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
run="$work/run"
train() { "$meshsim" train --total-decisions 2048 --quiet --no-plot --out "$run" "$@"; }
limited() {  # limited ARGS...: train where no file may pass 40 KiB (policy.pt is ~60 KiB)
  set +e
  (trap '' XFSZ; ulimit -f 40; train "$@") > "$work/limited.out" 2> "$work/limited.err"
  code=$?
  set -e
  if [ "$code" != 3 ]; then echo "train on a full disk: exit $code, expected 3"; cat "$work/limited.err"; exit 1; fi
  grep -q "cannot write the checkpoint: .*policy.pt: write failed" "$work/limited.err" ||
    { echo "the failure does not name the file:"; cat "$work/limited.err"; exit 1; }
  test ! -e "$run/checkpoint.tmp" || { echo "checkpoint.tmp left behind"; exit 1; }
}

limited
test ! -e "$run/checkpoint" || { echo "a checkpoint appeared from a failed save"; exit 1; }
rm -rf "$run"

train --max-iterations 1
cp "$run/checkpoint/state.json" "$work/first-state.json"
limited --resume
cmp "$run/checkpoint/state.json" "$work/first-state.json" ||
  { echo "the failed save changed the previous checkpoint"; exit 1; }
train --resume
grep -q '"iteration": 2' "$run/checkpoint/state.json" || { echo "the resumed run did not finish"; exit 1; }
echo "a full disk during a checkpoint: exit 3 naming the file, the previous checkpoint kept and resumed"
