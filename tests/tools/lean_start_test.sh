#!/usr/bin/env bash
# `meshsim` loads neither LibTorch nor Open MPI (nor Gloo): every command but train, eval
# and sweep under mpirun starts without them, and those three are handed to meshsim-rl and
# meshsim-mpi, which must answer as meshsim would. A meshsim copied away from its
# companions says which one it misses.
# Usage: lean_start_test.sh MESHSIM WORKDIR [HAVE_RL]
set -euo pipefail
meshsim=$1 work=$2 have_rl=${3:-0}
rm -rf "$work" && mkdir -p "$work"

heavy=$(ldd "$meshsim" | grep -E -i 'torch|libmpi|open-pal|open-rte|gloo|libc10' || true)
if [ -n "$heavy" ]; then
  echo "meshsim loads heavy libraries at start-up:"; echo "$heavy"; exit 1
fi
# Every library a replay loads while it runs, dlopen included (the loader's own log).
LD_DEBUG=files "$meshsim" replay --until 60 --quiet --out "$work/run" 2> "$work/loaded.txt"
grep -q "file=" "$work/loaded.txt"  # the log is there
if grep -E -i 'file=.*(torch|libmpi|gloo)' "$work/loaded.txt"; then echo "a replay loaded the libraries above"; exit 1; fi

if [ "$have_rl" = 1 ]; then
  # Parsed by meshsim, run by meshsim-rl: its help, and its own checks of the options.
  "$meshsim" train --help | grep -q -- "--total-decisions"
  set +e
  "$meshsim" eval --split nowhere --out "$work/eval" 2> "$work/eval.err"
  code=$?
  set -e
  test "$code" = 2 || { echo "eval --split nowhere: exit $code, expected 2"; cat "$work/eval.err"; exit 1; }
  grep -q "split" "$work/eval.err"
  # Away from its companions: a clear error naming the missing executable, exit 70.
  cp "$meshsim" "$work/meshsim"
  set +e
  "$work/meshsim" train --out "$work/train" 2> "$work/alone.err"
  code=$?
  set -e
  test "$code" = 70 || { echo "train without meshsim-rl: exit $code, expected 70"; exit 1; }
  grep -q "meshsim-rl" "$work/alone.err"
fi
echo "meshsim starts without LibTorch and MPI; train and eval run in meshsim-rl"
