// The RL environment's speed (issue 10 (a) and (c)): decisions per wall second of
// environments stepped with a fixed random policy, resets included (episodes of 40
// decisions of 15 s), on
//  - light: the default scenario's Azure-fitted workload at 2% of its rate (a few
//    requests per decision interval), the configuration the >= 100,000 decisions/s goal
//    is stated for;
//  - heavy: the same workload at its real rate, where simulated requests per wall second
//    (req_per_s) are compared with plain replay (serving_bench) instead.
// BM_EnvDecisions steps one ScalingEnv (arg 2: light with residual actions, whose target
// tracking baseline is asked once a decision; compare with arg 0); BM_VectorEnvDecisions steps N = 1, 2, 8, 32 of
// them as a VectorEnv on the machine's threads (one decision = one environment's step);
// BM_VectorEnvBesideBusyProcess steps 8 on 1 thread and on 2 while another process keeps
// one core busy (issue 25: the pool must not collapse when a core is taken; compare the
// two rows' decisions_per_s).
#include <benchmark/benchmark.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "rl/env/vector_env.hpp"
#include "sim/engine/rng.hpp"
#include "traces/episode_workload.hpp"
#include "traces/workload_source.hpp"

namespace {

using namespace meshsim;

const configs::Catalog& catalog() {
  static const configs::Catalog loaded = *configs::load_catalog(configs::default_catalog_folder());
  return loaded;
}

struct Setup {
  configs::ScenarioConfig config;
  traces::SharedWorkload trace;
};

Setup setup(bool heavy, bool residual = false) {
  Setup s;
  s.config = *configs::load_scenario(configs::default_scenario_path());
  s.config.workload.window_end = engine::SimTime::from_seconds(7200);
  s.config.workload.rate_scale = heavy ? 1.0 : 0.02;
  configs::RlSpec rl;
  rl.episode_length = engine::SimTime::from_seconds(600);
  if (residual) rl.action = configs::ActionKind::kResidual;
  s.config.rl = rl;
  auto source = traces::open_workload(s.config.workload, s.config.seed);
  s.trace = traces::in_memory(*traces::load_trace(**source));
  return s;
}

void report(benchmark::State& state, std::uint64_t decisions, std::uint64_t requests, double seconds) {
  state.counters["decisions_per_s"] = static_cast<double>(decisions) / seconds;
  state.counters["req_per_s"] = static_cast<double>(requests) / seconds;
  state.counters["req_per_decision"] = static_cast<double>(requests) / static_cast<double>(decisions);
}

// arg 0: 0 light, 1 heavy, 2 light with residual actions.
void BM_EnvDecisions(benchmark::State& state) {
  const bool residual = state.range(0) == 2;
  const Setup s = setup(state.range(0) == 1, residual);
  auto env = std::move(*rl::ScalingEnv::create(s.config, catalog(), s.trace));
  std::vector<float> obs(env->observation_size());
  engine::Rng policy(5);
  std::uint64_t decisions = 0, requests = 0;
  env->reset(1, obs);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    // Continuous in [-0.2, 0.2] (about -1..1 instances); residual: one of the 5 choices.
    const float action = static_cast<float>(residual ? std::floor(policy.uniform() * 5) : policy.uniform() * 0.4 - 0.2);
    const rl::StepResult result = env->step({&action, 1}, obs);
    requests += result.info.left;
    ++decisions;
    if (result.truncated) env->reset(std::nullopt, obs);
  }
  report(state, decisions, requests, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// Steps a VectorEnv of n environments on `threads` (0: one per hardware thread) with a
// fixed random policy for the benchmark's iterations, and reports.
void step_vector_env(benchmark::State& state, const Setup& s, std::size_t n, unsigned threads) {
  auto vec = std::move(*rl::VectorEnv::create(s.config, catalog(), s.trace, {.num_envs = n, .threads = threads}));
  engine::Rng policy(5);
  std::vector<float> actions(n * vec->action_size());
  std::uint64_t decisions = 0, requests = 0;
  vec->reset(1);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (float& a : actions) a = static_cast<float>(policy.uniform() * 0.4 - 0.2);
    vec->step(actions);
    for (const auto& info : vec->infos()) requests += info.left;
    decisions += n;
  }
  report(state, decisions, requests, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  state.counters["threads"] = vec->threads();
}

// args: N environments, 0 light / 1 heavy. Threads: one per hardware thread.
void BM_VectorEnvDecisions(benchmark::State& state) {
  step_vector_env(state, setup(state.range(1) == 1), static_cast<std::size_t>(state.range(0)), 0);
}

// A child process spinning on a core until destroyed.
class BusyProcess {
 public:
  BusyProcess() : pid_(::fork()) {
    if (pid_ == 0) {
      volatile std::uint64_t spin = 0;
      for (;;) spin = spin + 1;
    }
  }
  ~BusyProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  BusyProcess(const BusyProcess&) = delete;
  BusyProcess& operator=(const BusyProcess&) = delete;

 private:
  pid_t pid_;
};

// arg: threads of the VectorEnv (8 light environments).
void BM_VectorEnvBesideBusyProcess(benchmark::State& state) {
  const Setup s = setup(false);
  const BusyProcess busy;
  step_vector_env(state, s, 8, static_cast<unsigned>(state.range(0)));
}

}  // namespace

BENCHMARK(BM_EnvDecisions)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VectorEnvDecisions)
    ->ArgsProduct({{1, 2, 8, 32}, {0}})
    ->Args({8, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VectorEnvBesideBusyProcess)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
