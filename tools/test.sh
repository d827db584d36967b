#!/usr/bin/env bash
# Quick start, part 2: set up, build, and run the whole test suite with ctest.
#   tools/test.sh              normal build in build/
#   tools/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#   tools/test.sh --tsan       ThreadSanitizer build in build-tsan/, the tests that run threads
#                              (tools/setup.sh --tsan builds only the programs that hold them)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
tests=()
case "${1:-}" in
  --sanitize) build_dir=build-asan ;;
  --tsan) build_dir=build-tsan; tests=(-R "DeterminismTest|ComparePresetsTest|ThreadPoolTest|VectorEnvTest") ;;
esac
tools/setup.sh "$@"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)" "${tests[@]}"
