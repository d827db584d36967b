#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for SECONDS
# (default 120), starting from small seeds made from the test inputs. Crashes are
# written to build-fuzz/crashes/.
#   tools/fuzz.sh [SECONDS [TARGET...]]   (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(csv_trace_fuzz jsonl_trace_fuzz config_fuzz scenario_fuzz serving_fold_fuzz
                                     state_file_fuzz env_options_fuzz)
tools/setup.sh --fuzz
mkdir -p build-fuzz/crashes build-fuzz/corpus/{csv,jsonl,config,scenario,serving,state,env}
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n' > build-fuzz/corpus/csv/seed
printf 't,p,o\n1.5,"3",4\n' > build-fuzz/corpus/csv/seed2
printf '{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1]}\n' > build-fuzz/corpus/jsonl/seed
printf '{"t": "2024-01-02 03:04:05", "p": 3, "o": 4, "h": [1], "x": [true, -1.5]}\n' > build-fuzz/corpus/jsonl/seed2
cp configs/scenarios/default.json build-fuzz/corpus/config/seed
cp experiments/scenarios/*.json build-fuzz/corpus/scenario/
printf '\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10' > build-fuzz/corpus/serving/seed
cat > build-fuzz/corpus/state/seed <<'STATE'
{"format": 3, "seed": 7, "iteration": 1, "iterations": 4, "decisions": 16,
 "policy": {"observations": 2, "actions": 1, "choices": 0, "hidden": [8]}, "rl": {},
 "normalize_observations": true, "observation_clip": 10,
 "observation_stats": {"mean": [0, 1], "var": [1, 2], "count": 3},
 "reward_scaler": {"returns": [0.5], "stats": {"mean": [0], "var": [1], "count": 2}},
 "shuffle_rng": [1, 2, 3, 4],
 "envs": [{"rng": [1, 2, 3, 4], "options": {"rate_scale": 1.5, "start_instances": 2}, "actions": [0.5, null],
           "action_rng": [5, 6, 7, 8], "episode_return": -1}]}
STATE
cat > build-fuzz/corpus/state/summary <<'SUMMARY'
{"requests": {"arrived": 3, "completed": 2, "dropped": 1, "in_flight": 0}, "slo": {"attainment": 0.5},
 "latency_s": {"ttft": {"p50": 1, "p99": 2}, "tbt": {"p50": 1, "p99": 2}, "e2e": {"p50": 1, "p99": 2}},
 "throughput": {"completed_per_s": 1}, "cost": {"gpu_hours": 1, "usd": 2}, "scaling": {"mean_instances": 2}}
SUMMARY
# A scheduler state file (R1 mid-run, cut to fit -max_len), written by meshsim itself.
cp tests/fuzz/seeds/scheduler_state.json build-fuzz/corpus/state/scheduler
printf '\x0a\x00\x00\x00\x00\x00\x00\xf8\x3f\x02\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00' > build-fuzz/corpus/env/seed
failed=()
declare -A corpus_of=([csv_trace_fuzz]=csv [jsonl_trace_fuzz]=jsonl [config_fuzz]=config [scenario_fuzz]=scenario
                      [serving_fold_fuzz]=serving [state_file_fuzz]=state [env_options_fuzz]=env)
for target in "${targets[@]}"; do
  corpus="${corpus_of[$target]:?unknown fuzz target $target}"
  echo "== $target for ${seconds}s"
  if ! "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -max_len=4096 \
      -artifact_prefix=build-fuzz/crashes/ "build-fuzz/corpus/$corpus" > "build-fuzz/$target.log" 2>&1; then
    failed+=("$target")
  fi
  tail -n 3 "build-fuzz/$target.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in build-fuzz/crashes/)" >&2
  exit 1
fi
