// PPO training throughput (issue 10 (b) and (c)): decisions per wall second of
// PpoTrainer::iterate (rollout with batched inference + minibatch epochs of Adam), one
// benchmark iteration = one PPO iteration, on the default training recipe
// (configs/scenarios/rl-train.json: 16 environments x 64 decisions, 4 minibatches, 10
// epochs) with
//  - arg 0, light: episodes at 0.5% of the recipe workload's rate (1.7 requests per decision);
//  - arg 1, heavy: the Azure conversation trace at its real rate (../shared's
//    azure2023_conv.csv when present, else the recipe's fitted workload): simulated
//    requests per wall second while training (req_per_s) against a plain replay of the
//    same trace on the same cluster measured in the same process (replay_req_per_s),
//    and their ratio (goal >= 0.5).
// Arg 1 picks the rollout's forward passes: 0 on the Eigen copy of the weights (what
// training uses), 1 on LibTorch (the baseline the copy was measured against);
// rollout_decisions_per_s counts the rollout alone.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

#include "sim/run/scenario_run.hpp"
#include "rl/ppo/trainer.hpp"
#include "traces/episode_workload.hpp"
#include "traces/workload_source.hpp"

namespace {

using namespace meshsim;
using Clock = std::chrono::steady_clock;

const configs::Catalog& catalog() {
  static const configs::Catalog loaded = *configs::load_catalog(configs::default_catalog_folder());
  return loaded;
}

configs::ScenarioConfig recipe(bool heavy) {
  auto config = *configs::load_scenario(configs::default_training_path());
  const std::string azure = MESHSIM_SHARED_DIR "/traces/azure2023_conv.csv";
  if (heavy && std::filesystem::exists(azure)) {
    config.workload = traces::WorkloadSpec{};
    config.workload.source = traces::TraceFileSpec{azure, traces::TraceFormat::kAzureCsv, {}};
  }
  // Light: 0.11 requests/s, about 1.7 per decision; heavy: the trace as recorded, windows
  // anywhere in it (the recipe's held-out split is for its own workload).
  config.rl->rate_scales = {heavy ? 1.0 : 0.005};
  config.rl->windows_from_s = 0;
  if (heavy) config.rl->windows_to_s.reset();
  return config;
}

class NullObserver final : public replay::ReplayObserver {};

// Simulated requests per wall second of a plain replay of `config`'s workload.
double replay_requests_per_s(configs::ScenarioConfig config) {
  config.rl.reset();
  NullObserver observer;
  auto run = std::move(*run::ScenarioRun::create(config, config.name, catalog(), observer));
  const auto start = Clock::now();
  run->start();
  if (auto ran = run->advance_until(engine::SimTime::max()); !ran) throw std::runtime_error(ran.error().message);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(run->replay().metrics().counts().arrived) / seconds;
}

void BM_TrainDecisions(benchmark::State& state) {
  const bool heavy = state.range(0) == 1;
  auto config = recipe(heavy);
  config.rl->ppo.total_decisions = 1'000'000'000;
  auto source = traces::open_workload(config.workload, config.seed);
  const auto trace = traces::in_memory(*traces::load_trace(**source));
  auto trainer = std::move(*rl::PpoTrainer::create(config, catalog(), trace, 1));
  trainer->set_torch_rollout(state.range(1) == 1);
  std::uint64_t decisions = 0, requests = 0;
  double rollout_s = 0, update_s = 0;
  const auto start = Clock::now();
  for (auto _ : state) {
    const rl::IterationStats stats = trainer->iterate();
    decisions = stats.decisions;
    requests += stats.requests;
    rollout_s += stats.rollout_seconds;
    update_s += stats.update_seconds;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  state.counters["decisions_per_s"] = static_cast<double>(decisions) / seconds;
  state.counters["req_per_s"] = static_cast<double>(requests) / seconds;
  state.counters["rollout_share"] = rollout_s / (rollout_s + update_s);
  state.counters["rollout_decisions_per_s"] = static_cast<double>(decisions) / rollout_s;
  if (heavy) {
    const double replay = replay_requests_per_s(config);
    state.counters["replay_req_per_s"] = replay;
    state.counters["vs_replay"] = static_cast<double>(requests) / seconds / replay;
  }
}

}  // namespace

BENCHMARK(BM_TrainDecisions)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"heavy", "torch_rollout"})
    ->Unit(benchmark::kMillisecond);
