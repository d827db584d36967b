// Scaling, measured against serving alone in the same process:
//  - BM_AutoscaledReplay: a diurnal workload (50,000 requests, Azure-conversation sizes)
//    on the default deployment (Llama2-70B TP4 on H100), replayed with no autoscaler and
//    with target tracking (15 s decisions, 10 s cold starts, instances coming and going
//    all day); reports both in simulated requests per wall second and their ratio
//    (issue 9: the autoscaled replay stays >= 100,000 req/s and within 2x of serving
//    alone);
//  - BM_ScalingDecision: one target-tracking decision (snapshot of the pool and the
//    scale-ups or drains it asks for) on pools of 10, 100 and 1,000 instances under a load
//    that swings by half every 15 s, so each decision adds or drains about a third of the
//    pool; p99 wall time per decision (p99_us) and per action it took
//    (p99_us_per_action; target <= 20 us);
//  - BM_ElasticDecision: one elastic-scheduler decision that scales up (seed 003's rules:
//    restart an INACTIVE worker, else start one) in pools of 1,000, 10,000 and 100,000
//    instances, a quarter of them INACTIVE; mean wall time per decision (us_per_decision),
//    which should not grow with the pool (it walked every instance before: 5k, 10k and
//    20k scale-ups took 2.0, 7.5 and 34.8 s).
// Roofline backend and a generated workload: no data from ../shared is needed.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/autoscale/elastic_scheduler.hpp"
#include "sim/autoscale/scaling_harness.hpp"
#include "sim/autoscale/target_tracking.hpp"
#include "sim/cluster/llm_cluster.hpp"
#include "traces/generated_source.hpp"

namespace {

using namespace meshsim;
using Clock = std::chrono::steady_clock;

class NullObserver final : public replay::ReplayObserver {};

// The decision benchmarks drive a cluster directly: its finished requests go nowhere.
struct NullSink final : cluster::RequestSink {
  void on_request_finished(const cluster::RequestRecord&) override {}
};

cluster::LlmClusterConfig llama_h100(std::uint32_t instances) {
  static const configs::Catalog catalog = *configs::load_catalog(configs::default_catalog_folder());
  cluster::LlmClusterConfig config;
  config.model = catalog.models.at("llama2-70b");
  config.sku = catalog.skus.at("h100-80gb");
  config.tensor_parallel = 4;
  config.kv_reserve_fraction = 0.1;
  config.perf = std::make_shared<cluster::RooflinePerfModel>(config.model, config.sku, 4,
                                                             catalog.factors_for("llama2-70b", "h100-80gb", 4));
  config.start_state = {{cluster::InstanceTag::kMixed, instances}};
  return config;
}

traces::GeneratorSpec diurnal(std::uint64_t requests) {
  static const traces::GeneratorSpec fitted =
      *configs::load_generator(configs::default_catalog_folder() + "/workloads/azure_conv.json");
  traces::GeneratorSpec spec = fitted;
  spec.arrivals.kind = traces::ArrivalSpec::Kind::kDiurnal;
  spec.arrivals.rate_per_s = 20;
  spec.arrivals.amplitude = 0.8;
  spec.arrivals.period_s = 3600;
  spec.requests = requests;
  return spec;
}

// Replays once, with target tracking or without; returns the wall seconds.
double replay_once(const cluster::LlmClusterConfig& config, const traces::GeneratorSpec& spec, bool autoscaled) {
  const auto start = Clock::now();
  engine::Simulation sim(1);
  traces::GeneratedSource source(spec, 1);
  NullObserver observer;
  cluster::LlmCluster* llm = nullptr;
  replay::Replay replay(sim, source, cluster::llm_cluster_factory(config, &llm), replay::ReplayOptions{}, observer);
  std::unique_ptr<autoscale::ScalingHarness> scaling;
  if (autoscaled) {
    scaling = std::make_unique<autoscale::ScalingHarness>(
        sim, replay, *llm, cluster::ScalingConfig{},
        std::make_unique<autoscale::TargetTrackingAutoscaler>(autoscale::TargetTrackingConfig{},
                                                              std::vector{cluster::InstanceTag::kMixed}));
  }
  replay.start();
  if (scaling) scaling->start();
  if (auto ran = replay.advance_until(engine::SimTime::max()); !ran) throw std::runtime_error(ran.error().message);
  auto result = replay.finish();
  benchmark::DoNotOptimize(result);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void BM_AutoscaledReplay(benchmark::State& state) {
  const auto requests = static_cast<std::uint64_t>(state.range(0));
  const auto config = llama_h100(6);
  const auto spec = diurnal(requests);
  double alone_s = 0, autoscaled_s = 0;
  for (auto _ : state) {
    alone_s += replay_once(config, spec, false);
    autoscaled_s += replay_once(config, spec, true);
  }
  const auto runs = static_cast<double>(state.iterations());
  state.counters["alone_req_per_s"] = static_cast<double>(requests) * runs / alone_s;
  state.counters["autoscaled_req_per_s"] = static_cast<double>(requests) * runs / autoscaled_s;
  state.counters["autoscaled_over_alone"] = alone_s / autoscaled_s;
}

void BM_ScalingDecision(benchmark::State& state) {
  const auto instances = static_cast<std::uint32_t>(state.range(0));
  auto config = llama_h100(instances);
  engine::Simulation sim(1);
  NullSink sink;
  cluster::LlmCluster llm(sim, config, sink);
  cluster::ScalingConfig scaling;
  scaling.max_total_instances = 4 * instances;
  cluster::ScalingManager manager(sim, llm, scaling);
  autoscale::TargetTrackingConfig tracking;
  tracking.scale_down_stabilization = engine::SimTime::zero();  // every decision acts
  tracking.max_instances = 4 * instances;
  autoscale::TargetTrackingAutoscaler hpa(tracking, {cluster::InstanceTag::kMixed});
  // Load: 24 requests per instance, long outputs, so decisions swing around the target.
  std::uint64_t id = 0;
  const auto submit = [&](std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      traces::TraceRequest r;
      r.id = id++;
      r.arrival = sim.now();
      r.prompt_tokens = 500;
      r.output_tokens = 5000;
      llm.submit(r);
    }
  };
  submit(24 * instances);
  std::vector<double> samples_us, per_action_us;
  std::uint64_t actions = 0;
  bool high = true;
  for (auto _ : state) {
    // Alternate the load so decisions scale up, then down.
    state.PauseTiming();
    if (high) submit(24 * instances);
    high = !high;
    sim.run_until(sim.now() + engine::SimTime::from_seconds(15));
    state.ResumeTiming();
    const auto before = manager.view().counts().scale_ups + manager.view().counts().scale_downs;
    const auto start = Clock::now();
    hpa.decide(manager);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    const auto taken = manager.view().counts().scale_ups + manager.view().counts().scale_downs - before;
    samples_us.push_back(us);
    per_action_us.push_back(us / static_cast<double>(std::max<std::uint64_t>(1, taken)));
    actions += taken;
  }
  const auto p99 = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() * 99 / 100];
  };
  state.counters["p99_us"] = p99(samples_us);
  state.counters["p99_us_per_action"] = p99(per_action_us);
  state.counters["actions_per_decision"] = static_cast<double>(actions) / static_cast<double>(samples_us.size());
  state.counters["instances"] = instances;
}

void BM_ElasticDecision(benchmark::State& state) {
  const auto instances = static_cast<std::uint32_t>(state.range(0));
  auto config = llama_h100(instances);
  engine::Simulation sim(1);
  NullSink sink;
  cluster::LlmCluster llm(sim, config, sink);
  cluster::ScalingConfig scaling;
  scaling.max_total_instances = 2 * instances;
  scaling.scale_up_delay = engine::SimTime::from_seconds(1e6);  // restarted workers stay STARTING
  cluster::ScalingManager manager(sim, llm, scaling);
  // A quarter of the pool drained to INACTIVE (idle instances drain at once).
  for (std::uint32_t i = 0; i < instances / 4; ++i) {
    const auto chosen = manager.view().least_loaded(cluster::InstanceTag::kMixed);
    if (!chosen || !manager.deactivate(*chosen)) state.SkipWithError("could not drain the pool");
  }
  sim.run_until(sim.now() + engine::SimTime::from_seconds(1));
  autoscale::ElasticConfig elastic;
  elastic.requests_per_worker_capacity = 1e-3;  // any request is a high load
  elastic.max_workers = 2 * instances;
  elastic.min_stable_period = engine::SimTime::zero();
  elastic.scale_up_cooldown = engine::SimTime::zero();
  autoscale::ElasticScheduler scheduler(elastic, cluster::InstanceTag::kMixed);
  traces::TraceRequest r;
  r.prompt_tokens = 500;
  r.output_tokens = 100000;
  for (std::uint64_t id = 0; id < 100; ++id) {
    r.id = id;
    llm.submit(r);
  }
  const auto before = manager.view().counts().scale_ups;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    scheduler.check(manager);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }
  const auto decisions = static_cast<double>(state.iterations());
  state.counters["us_per_decision"] = 1e6 * seconds / decisions;
  state.counters["scale_ups_per_decision"] = static_cast<double>(manager.view().counts().scale_ups - before) / decisions;
  state.counters["instances"] = instances;
}

}  // namespace

BENCHMARK(BM_AutoscaledReplay)->Arg(50'000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ScalingDecision)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK(BM_ElasticDecision)->Arg(1000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond)->Iterations(200);
