// Replay throughput of the LLM serving model (simulated requests per wall-clock second):
//  - BM_ScaleServers: Splitwise-HH-like clusters (5 prompt : 3 token BLOOM-176B TP8
//    instances on DGX-H100) at 3.75 req/s per server (150 req/s at 40 servers), 4 to 400
//    servers, Azure-conversation request sizes;
//  - BM_Overload: 4 mixed instances (Baseline-H100-like) at 0.5x, 1x and 2x the load they
//    can serve, 4,000 and 12,000 requests: wall time must stay linear in requests even
//    when queues grow without bound (requests/s equal at both sizes).
// Roofline backend and the fitted workload: no data from ../shared is needed.
#include <benchmark/benchmark.h>

#include <chrono>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/cluster/llm_cluster.hpp"
#include "sim/replay/replay.hpp"
#include "traces/generated_source.hpp"

namespace {

using namespace meshsim;

class NullObserver final : public replay::ReplayObserver {};

cluster::LlmClusterConfig bloom_h100(std::vector<cluster::InstanceGroup> groups) {
  static const configs::Catalog catalog = *configs::load_catalog(configs::default_catalog_folder());
  cluster::LlmClusterConfig config;
  config.model = catalog.models.at("bloom-176b");
  config.sku = catalog.skus.at("h100-80gb");
  config.tensor_parallel = 8;
  config.perf = std::make_shared<cluster::RooflinePerfModel>(config.model, config.sku, 8,
                                                             catalog.factors_for("bloom-176b", "h100-80gb", 8));
  config.start_state = std::move(groups);
  config.prompt_routing = cluster::RoutePolicy::kFewestRequests;
  config.token_routing = cluster::RoutePolicy::kFewestRequests;
  return config;
}

traces::GeneratorSpec workload(double rate_per_s, std::uint64_t requests) {
  static const traces::GeneratorSpec fitted =
      *configs::load_generator(configs::default_catalog_folder() + "/workloads/azure_conv.json");
  traces::GeneratorSpec spec = fitted;
  spec.arrivals.kind = traces::ArrivalSpec::Kind::kPoisson;
  spec.arrivals.rate_per_s = rate_per_s;
  spec.requests = requests;
  return spec;
}

// Replays once; returns the number of requests that arrived.
std::uint64_t replay_once(const cluster::LlmClusterConfig& config, const traces::GeneratorSpec& spec) {
  engine::Simulation sim(1);
  traces::GeneratedSource source(spec, 1);
  NullObserver observer;
  replay::Replay replay(
      sim, source,
      [&config](engine::Simulation& s, cluster::RequestSink& sink) {
        return std::unique_ptr<cluster::ServingSystem>(std::make_unique<cluster::LlmCluster>(s, config, sink));
      },
      replay::ReplayOptions{}, observer);
  auto result = replay.run();
  benchmark::DoNotOptimize(result);
  return replay.metrics().counts().arrived;
}

void BM_ScaleServers(benchmark::State& state) {
  const auto servers = static_cast<std::uint32_t>(state.range(0));
  const std::uint32_t prompt = servers * 5 / 8;
  const auto config = bloom_h100({{cluster::InstanceTag::kPrompt, prompt}, {cluster::InstanceTag::kToken, servers - prompt}});
  const auto spec = workload(3.75 * servers, 20'000);
  std::uint64_t requests = 0;
  for (auto _ : state) requests += replay_once(config, spec);
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
  state.counters["servers"] = servers;
}

void BM_Overload(benchmark::State& state) {
  // 4 mixed instances complete at most about 10.7 req/s of conversation requests
  // (measured: completions level off there, KV-bound, while arrivals at 16 to 44 req/s
  // only lengthen the queue), so 1x is 10.7 req/s.
  constexpr double kCapacityPerS = 10.7;
  const double load = static_cast<double>(state.range(0)) / 10.0;
  const auto requests = static_cast<std::uint64_t>(state.range(1));
  const auto config = bloom_h100({{cluster::InstanceTag::kMixed, 4}});
  const auto spec = workload(kCapacityPerS * load, requests);
  std::uint64_t arrived = 0;
  for (auto _ : state) arrived += replay_once(config, spec);
  state.SetItemsProcessed(static_cast<std::int64_t>(arrived));
  state.counters["load"] = load;
}

BENCHMARK(BM_ScaleServers)->Arg(4)->Arg(40)->Arg(400)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Overload)
    ->Args({5, 4000})->Args({5, 12000})
    ->Args({10, 4000})->Args({10, 12000})
    ->Args({20, 4000})->Args({20, 12000})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
