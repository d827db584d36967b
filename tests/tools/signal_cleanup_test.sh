#!/usr/bin/env bash
# `meshsim replay` stopped by SIGINT or SIGTERM while writing leaves no temporary files
# (*.tmp) behind, nor its folder's lock file, and dies by that signal.
#   signal_cleanup_test.sh MESHSIM WORK_DIR
set -u
set -m  # job control: the background run gets SIGINT as a foreground one would
meshsim="$1"
dir="$2"
for sig in INT TERM; do
  rm -rf "$dir"
  mkdir -p "$dir"
  # A workload long enough to be interrupted (a hundred million requests).
  cat > "$dir/long.json" <<'JSON'
{"workload": {"generator": {"name": "long", "arrivals": {"kind": "poisson", "rate_per_s": 50},
  "prompt_tokens": {"kind": "fixed", "value": 100}, "output_tokens": {"kind": "fixed", "value": 20},
  "requests": 100000000}}}
JSON
  "$meshsim" replay --quiet --config "$dir/long.json" --out "$dir/out" --trace-events "$dir/timeline.json" &
  pid=$!
  for _ in $(seq 200); do
    [ -e "$dir/out/requests.csv.tmp" ] && [ -e "$dir/timeline.json.tmp" ] && [ -e "$dir/out/.meshsim.lock" ] && break
    sleep 0.05
  done
  if [ ! -e "$dir/out/requests.csv.tmp" ]; then
    echo "FAIL: the run never started writing"
    kill -9 "$pid"
    exit 1
  fi
  kill "-$sig" "$pid"
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "FAIL: SIG$sig did not stop the run"
    kill -9 "$pid"
    exit 1
  fi
  wait "$pid"
  code=$?
  left=$(find "$dir" -name '*.tmp' -o -name '.meshsim.lock')
  if [ -n "$left" ]; then
    echo "FAIL: SIG$sig left $left"
    exit 1
  fi
  expected=$((128 + $(kill -l "$sig")))
  if [ "$code" -ne "$expected" ]; then
    echo "FAIL: SIG$sig: exit status $code, expected $expected"
    exit 1
  fi
  echo "SIG$sig: exit status $code, no temporary or lock file left"
done

# A sweep writes many runs at once, each with its own temporaries: SIGINT must remove all
# of them (16 threads once left 20 behind, more files than the handler had room for).
rm -rf "$dir" && mkdir -p "$dir"
cat > "$dir/grid.json" <<JSON
{"config": "$dir/long.json", "grid": {"seed": [$(seq -s, 1 24)]}}
JSON
cat > "$dir/long.json" <<'JSON'
{"workload": {"generator": {"name": "long", "arrivals": {"kind": "poisson", "rate_per_s": 50},
  "prompt_tokens": {"kind": "fixed", "value": 100}, "output_tokens": {"kind": "fixed", "value": 20},
  "requests": 100000000}}}
JSON
"$meshsim" sweep "$dir/grid.json" --threads 24 --out "$dir/sweep" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do  # until every run writes (3 temporaries each)
  [ "$(find "$dir/sweep" -name '*.tmp' 2>/dev/null | wc -l)" -ge 72 ] && break
  sleep 0.05
done
writing=$(find "$dir/sweep" -name '*.tmp' | wc -l)
if [ "$writing" -lt 72 ]; then
  echo "FAIL: the sweep's 24 runs never all started writing ($writing temporaries)"
  kill -9 "$pid"
  exit 1
fi
kill -INT "$pid"
wait "$pid"
code=$?
left=$(find "$dir/sweep" -name '*.tmp' -o -name '.meshsim.lock')
if [ -n "$left" ]; then
  echo "FAIL: SIGINT left $(echo "$left" | wc -l) files of a sweep of 24 threads: $(echo "$left" | head -3)"
  exit 1
fi
[ "$code" -eq 130 ] || { echo "FAIL: the sweep's exit status $code, expected 130"; exit 1; }
echo "sweep: SIGINT with $writing temporaries open left none"

# Runs that start and finish all the time (short runs on 16 threads): SIGTERM lands while
# other threads are creating temporaries, which once left a .tmp in about one try of 35.
rm -rf "$dir" && mkdir -p "$dir"
cat > "$dir/short.json" <<'JSON'
{"workload": {"generator": {"name": "short", "arrivals": {"kind": "poisson", "rate_per_s": 50},
  "prompt_tokens": {"kind": "fixed", "value": 100}, "output_tokens": {"kind": "fixed", "value": 20},
  "requests": 200}}}
JSON
cat > "$dir/grid.json" <<JSON
{"config": "$dir/short.json", "grid": {"seed": [$(seq -s, 1 2000)]}}
JSON
for try in $(seq 20); do
  rm -rf "$dir/sweep"
  "$meshsim" sweep "$dir/grid.json" --threads 16 --out "$dir/sweep" > /dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 4 + 1))$((RANDOM % 10))"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  left=$(find "$dir/sweep" -name '*.tmp' -o -name '.meshsim.lock')
  if [ -n "$left" ]; then
    echo "FAIL: SIGTERM on try $try left $(echo "$left" | wc -l) files: $(echo "$left" | head -3)"
    exit 1
  fi
done
echo "sweep of short runs: SIGTERM 20 times at random moments left no file"
