#pragma once

// What the benchmarks that replay a whole scenario share: the run, to its end, on the
// bundled catalog, with no observer.
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/replay/replay.hpp"
#include "sim/run/scenario_run.hpp"

namespace meshsim::bench {

class NullObserver final : public replay::ReplayObserver {};

// Replays `config` to its end once per iteration of `state`; the requests simulated per
// wall second are the benchmark's items.
inline void replay_scenario_to_end(benchmark::State& state, const configs::ScenarioConfig& config) {
  static const configs::Catalog catalog = *configs::load_catalog(configs::default_catalog_folder());
  std::uint64_t requests = 0;
  for (auto _ : state) {
    NullObserver observer;
    auto run = run::ScenarioRun::create(config, "bench", catalog, observer);
    if (!run) throw std::runtime_error(run.error().message);
    (*run)->start();
    if (auto ran = (*run)->advance_until(engine::SimTime::max()); !ran) throw std::runtime_error(ran.error().message);
    benchmark::DoNotOptimize((*run)->finish());
    requests += (*run)->replay().metrics().counts().arrived;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
}

}  // namespace meshsim::bench
