// Routing cost at 1,000 instances: pick the least-loaded instance and update its load
// (what LlmCluster does per request) with the LoadIndex, against a linear scan for the
// minimum over the same loads, in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "sim/cluster/load_index.hpp"
#include "sim/engine/rng.hpp"

namespace {

constexpr std::uint32_t kInstances = 1000;

void BM_RouteLoadIndex(benchmark::State& state) {
  meshsim::cluster::LoadIndex index;
  std::vector<std::int64_t> loads(kInstances, 0);
  for (std::uint32_t i = 0; i < kInstances; ++i) index.add(i, 0);
  meshsim::engine::Rng rng(1);
  for (auto _ : state) {
    // One arrival routed to the least loaded, one departure from a random instance.
    const std::uint32_t chosen = index.least();
    index.update(chosen, loads[chosen] += 100);
    const auto leaving = static_cast<std::uint32_t>(rng.uniform_int(kInstances));
    if (loads[leaving] > 0) index.update(leaving, loads[leaving] -= 100);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RouteLinearScan(benchmark::State& state) {
  std::vector<std::int64_t> loads(kInstances, 0);
  meshsim::engine::Rng rng(1);
  for (auto _ : state) {
    const auto chosen = static_cast<std::uint32_t>(std::min_element(loads.begin(), loads.end()) - loads.begin());
    loads[chosen] += 100;
    const auto leaving = static_cast<std::uint32_t>(rng.uniform_int(kInstances));
    if (loads[leaving] > 0) loads[leaving] -= 100;
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_RouteLoadIndex);
BENCHMARK(BM_RouteLinearScan);

}  // namespace
