#!/usr/bin/env bash
# `mpirun -n 3 meshsim sweep GRID` hands the runs out over three processes and gathers the
# CSV at rank 0: it must equal the CSV of one process, and every run folder must exist.
# Usage: sweep_mpi_test.sh MPIRUN MESHSIM WORKDIR
set -euo pipefail
mpirun=$1 meshsim=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat > "$work/grid.json" <<'GRID'
{"grid": {"workload.rate_scale": [0.5, 1, 2], "serving.start_state.0.count": [2, 4]},
 "list": [{"run.until_s": 300}], "seeds": [1, 2]}
GRID
"$meshsim" sweep "$work/grid.json" --out "$work/one" --threads 1 --quiet
# Root may run it (CI does); --oversubscribe: three processes on a two-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --metrics-port 0: rank 0 serves the live counts (any free port), fed by every rank's runs.
"$mpirun" --oversubscribe -n 3 "$meshsim" sweep "$work/grid.json" --out "$work/three" --metrics-port 0 \
  2> "$work/three.err" | tee "$work/three.txt"
test "$(grep -c "^metrics at http://127.0.0.1:" "$work/three.err")" = 1
grep -q "12 runs (0 resumed, 0 failed) .* on 3 MPI processes" "$work/three.txt"
cmp "$work/one/sweep.csv" "$work/three/sweep.csv"
for i in $(seq -f %04g 0 11); do test -f "$work/three/runs/$i/summary.json"; done
echo "mpirun -n 3: the same sweep.csv as one process, 12 run folders"
