#!/usr/bin/env bash
# Quick start, part 1: set up, build, and replay the default scenario (a workload fitted
# to the Azure 2023 conversation trace; no external data needed). Prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/tools/meshsim replay --out build/runs/default "$@"
