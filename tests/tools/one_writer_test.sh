#!/usr/bin/env bash
# One writer per output folder, across processes: while another process holds a folder's
# lock, every command that writes that folder (replay, sweep, compare-presets, and train
# and eval where LibTorch is built) exits 3 at once naming the folder and writes nothing
# into it; once the holder is gone the same command runs.
# Usage: one_writer_test.sh MESHSIM WORKDIR [HAVE_RL]
set -euo pipefail
meshsim=$1 work=$2 have_rl=${3:-0}
rm -rf "$work" && mkdir -p "$work/held"
held="$work/held"

# Another process holds the folder (as a running meshsim would) until we say.
mkfifo "$work/release"
exec 3<> "$work/release"  # kept open here, so the holder's read waits for our line
flock "$held/.meshsim.lock" -c "echo 'pid 0, meshsim replay' > '$held/.meshsim.lock'; read -r _ < '$work/release'" &
holder=$!
for _ in $(seq 100); do  # until it holds the lock and has written its name
  if ! flock -n "$held/.meshsim.lock" true && grep -q pid "$held/.meshsim.lock"; then break; fi
  sleep 0.05
done

cat > "$work/grid.json" <<GRID
{"config": "$(cd "$(dirname "$0")/../.." && pwd)/configs/scenarios/default.json", "grid": {"run.until_s": [30]}, "seeds": [1, 2]}
GRID

refused() {  # refused NAME COMMAND...: exit 3, the folder named, nothing written
  local name=$1; shift
  set +e
  "$@" > "$work/$name.out" 2> "$work/$name.err"
  local code=$?
  set -e
  if [ "$code" != 3 ]; then echo "$name into a held folder: exit $code, expected 3"; cat "$work/$name.err"; exit 1; fi
  grep -q "another command is writing this folder (pid 0, meshsim replay)" "$work/$name.err" ||
    { echo "$name: the refusal does not name the holder:"; cat "$work/$name.err"; exit 1; }
  local files
  files=$(ls -A "$held")
  if [ "$files" != ".meshsim.lock" ]; then echo "$name wrote into the held folder: $files"; exit 1; fi
}
refused replay "$meshsim" replay --until 30 --quiet --out "$held"
refused sweep "$meshsim" sweep "$work/grid.json" --quiet --out "$held"
refused presets "$meshsim" compare-presets --until 30 --presets LOW --no-plot --out "$held"
if [ "$have_rl" = 1 ]; then
  refused train "$meshsim" train --total-decisions 64 --quiet --no-plot --out "$held"
fi

echo go >&3
wait "$holder"
"$meshsim" replay --until 30 --quiet --out "$held"
test -s "$held/summary.json"
test ! -e "$held/.meshsim.lock"  # the writer removed its lock when it finished
echo "one writer per folder: every command refused while held, and ran once free"
