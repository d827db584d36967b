#!/usr/bin/env bash
# Distributed `meshsim train` as separate processes: two ranks meeting over a TCP store,
# and (when given) `mpirun -n 2` meeting over a file store, must both give the learning
# curve of one process (deterministic columns to float summation order), identical to
# each other, with the checkpoint written once by rank 0.
# Usage: train_ranks_test.sh MESHSIM WORKDIR [MPIRUN]
set -euo pipefail
meshsim=$1 work=$2 mpirun=${3:-}
rm -rf "$work" && mkdir -p "$work"
train=("$meshsim" train --total-decisions 2048 --threads 1 --no-plot)
"${train[@]}" --out "$work/one" --quiet

# A free port for rank 0's store.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${train[@]}" --out "$work/tcp" --world-size 2 --rank 1 --store "tcp://127.0.0.1:$port" > "$work/rank1.txt" &
rank1=$!
"${train[@]}" --out "$work/tcp" --world-size 2 --rank 0 --store "tcp://127.0.0.1:$port" | tee "$work/rank0.txt"
wait $rank1
grep -q "16 environments over 2 ranks (8 each)" "$work/rank0.txt"
test ! -s "$work/rank1.txt"  # rank 0 speaks for the run

# Columns 1-15 (the last three are wall-clock) agree to a relative 1e-4.
close() {
  awk -F, 'NR == FNR { for (c = 1; c <= 15; ++c) want[FNR, c] = $c; rows = FNR; next }
           FNR > 1 { for (c = 1; c <= 15; ++c) { d = $c - want[FNR, c]; if (d < 0) d = -d;
                     m = want[FNR, c] < 0 ? -want[FNR, c] : want[FNR, c]; if (m < 1) m = 1;
                     if (d > 1e-4 * m) { print FILENAME ": row " FNR " column " c ": " $c " vs " want[FNR, c]; bad = 1 } } }
           END { if (FNR != rows) { print "row counts differ"; bad = 1 }; exit bad }' "$1" "$2"
}
close "$work/one/learning_curve.csv" "$work/tcp/learning_curve.csv"
test -f "$work/tcp/checkpoint/state.json"
echo "2 processes over tcp://: the learning curve of one process"

if [ -n "$mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  "$mpirun" --oversubscribe -n 2 "${train[@]}" --out "$work/mpi" --store "file://$work/mpi-store" --quiet
  close "$work/one/learning_curve.csv" "$work/mpi/learning_curve.csv"
  cmp <(cut -d, -f1-15 "$work/tcp/learning_curve.csv") <(cut -d, -f1-15 "$work/mpi/learning_curve.csv")
  echo "mpirun -n 2: the same curve as the two processes over tcp://"
fi
