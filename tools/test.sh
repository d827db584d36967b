#!/usr/bin/env bash
# Quick start, part 2: set up, build, and run the whole test suite with ctest.
#   tools/test.sh              normal build in build/
#   tools/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
if [ "${1:-}" = "--sanitize" ]; then build_dir=build-asan; fi
tools/setup.sh "$@"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)"
