// The RL environment's speed (issue 10 (a) and (c)): decisions per wall second of one
// ScalingEnv stepped with a fixed random policy, resets included (episodes of 40
// decisions of 15 s), on
//  - arg 0, light: the default scenario's Azure-fitted workload at 2% of its rate (a few
//    requests per decision interval), the configuration the >= 100,000 decisions/s goal
//    is stated for;
//  - arg 1, heavy: the same workload at its real rate, where simulated requests per wall
//    second (req_per_s) are compared with plain replay (serving_bench) instead.
// The vectorised environments (N = 2, 8, 32 on a thread pool) arrive with the trainer.
#include <benchmark/benchmark.h>

#include <chrono>

#include "rl/env/scaling_env.hpp"
#include "sim/engine/rng.hpp"
#include "traces/workload_source.hpp"

namespace {

using namespace meshsim;

void BM_EnvDecisions(benchmark::State& state) {
  const bool heavy = state.range(0) == 1;
  static const configs::Catalog catalog = *configs::load_catalog(configs::default_catalog_folder());
  auto config = *configs::load_scenario(configs::default_scenario_path());
  config.workload.window_end = engine::SimTime::from_seconds(7200);
  config.workload.rate_scale = heavy ? 1.0 : 0.02;
  configs::RlSpec rl;
  rl.episode_length = engine::SimTime::from_seconds(600);
  config.rl = rl;
  auto source = traces::open_workload(config.workload, config.seed);
  const auto trace = *traces::load_trace(**source);
  auto env = std::move(*rl::ScalingEnv::create(config, catalog, trace));
  std::vector<float> obs(env->observation_size());
  engine::Rng policy(5);
  std::uint64_t decisions = 0, requests = 0;
  env->reset(1, obs);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const float action = static_cast<float>(policy.uniform() * 0.4 - 0.2);
    const rl::StepResult result = env->step({&action, 1}, obs);
    requests += result.info.left;
    ++decisions;
    if (result.truncated) env->reset(std::nullopt, obs);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.counters["decisions_per_s"] = static_cast<double>(decisions) / seconds;
  state.counters["req_per_s"] = static_cast<double>(requests) / seconds;
  state.counters["req_per_decision"] = static_cast<double>(requests) / static_cast<double>(decisions);
}

}  // namespace

BENCHMARK(BM_EnvDecisions)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
