#!/usr/bin/env bash
# serving.max_requests_in_system bounds memory, so a bound the process could not hold is
# refused before the run (exit 2 naming the key and the limit), never an allocation failure
# under a burst (exit 70); the default bound runs under the same limit.
# Usage: memory_limit_test.sh MESHSIM WORKDIR
set -euo pipefail
meshsim=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
run() {  # run NAME ARGS...: meshsim ARGS under a 4 GB address-space limit; prints its exit code
  local name=$1; shift
  set +e
  (ulimit -v 4000000; "$meshsim" "$@") > "$work/$name.out" 2> "$work/$name.err"
  echo $?
  set -e
}
status=0
code=$(run big replay --until 30 --quiet --set serving.max_requests_in_system=100000000 --out "$work/big")
if [ "$code" != 2 ] || ! grep -q "serving.max_requests_in_system: 100000000 requests in the system could take about 60.0 GB" "$work/big.err" ||
   ! grep -q "address-space limit" "$work/big.err"; then
  echo "FAIL: a bound of 1e8 under a 4 GB limit: exit $code"; cat "$work/big.err"; status=1
fi
code=$(run default replay --until 30 --quiet --out "$work/default")
if [ "$code" != 0 ]; then echo "FAIL: the default bound under a 4 GB limit: exit $code"; cat "$work/default.err"; status=1; fi
[ "$status" = 0 ] && echo "a bound beyond the memory limit is refused naming it; the default runs"
exit $status
