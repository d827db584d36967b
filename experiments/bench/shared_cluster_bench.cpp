// The shared cluster (serving and batch jobs under the scheduling core), measured against
// serving alone in the same process:
//  - BM_SharedClusterReplay: configs/scenarios/shared-cluster-synthetic.json (the
//    Azure-fitted workload under target tracking on 5 DGX-H100 nodes beside ~7,100 batch
//    jobs drawn from the openb fit), and its serving-only twin (the same config on an
//    elastic cluster without batch jobs); simulated requests per wall second of each and
//    their ratio (issue 9: >= 100,000 req/s, within 2x of serving alone). Arg 1 replays
//    configs/scenarios/shared-cluster.json instead (the real Azure trace and openb pods;
//    skipped without ../shared).
//  - BM_ScalingDecisionThroughCore: one scale_up_full on a cluster full of batch work
//    (placed through the core, preempting batch jobs) or scale_down_full (the drained
//    instance's task completes in the core), on clusters of 8, 64 and 512 nodes; p50 and
//    p99 wall time per action, also per direction (target <= 20 us at p99), over 4,000
//    actions, and p99 per core operation it took
//    (the placement or release and each preemption: a scale-up here preempts four 1-GPU
//    jobs).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/shared/shared_cluster.hpp"

namespace {

using namespace meshsim;
using Clock = std::chrono::steady_clock;

class NullObserver final : public replay::ReplayObserver {};

const configs::Catalog& catalog() {
  static const configs::Catalog loaded = *configs::load_catalog(configs::default_catalog_folder());
  return loaded;
}

// Replays once; returns the wall seconds (and the requests served).
double replay_once(const configs::ScenarioConfig& config, std::uint64_t& requests) {
  const auto start = Clock::now();
  NullObserver observer;
  auto run = run::ScenarioRun::create(config, "bench", catalog(), observer);
  if (!run) throw std::runtime_error(run.error().message);
  (*run)->start();
  if (auto ran = (*run)->advance_until(config.replay.until.value_or(engine::SimTime::max())); !ran) throw std::runtime_error(ran.error().message);
  auto result = (*run)->finish();
  benchmark::DoNotOptimize(result);
  requests = (*run)->replay().metrics().counts().arrived;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void BM_SharedClusterReplay(benchmark::State& state) {
  const bool real = state.range(0) == 1;
  const std::string path = configs::default_catalog_folder() +
                           (real ? "/scenarios/shared-cluster.json" : "/scenarios/shared-cluster-synthetic.json");
  auto shared = configs::load_scenario(path);
  if (!shared) {
    state.SkipWithError(("needs the shared traces: " + shared.error().message).c_str());
    for (auto _ : state) {
    }
    return;
  }
  configs::ScenarioConfig alone = *shared;
  alone.cluster = configs::ClusterSpec{};  // elastic servers, no batch jobs
  double shared_s = 0, alone_s = 0;
  std::uint64_t requests = 0;
  for (auto _ : state) {
    shared_s += replay_once(*shared, requests);
    alone_s += replay_once(alone, requests);
  }
  const auto runs = static_cast<double>(state.iterations());
  state.counters["shared_req_per_s"] = static_cast<double>(requests) * runs / shared_s;
  state.counters["alone_req_per_s"] = static_cast<double>(requests) * runs / alone_s;
  state.counters["alone_over_shared"] = shared_s / alone_s;
}

void BM_ScalingDecisionThroughCore(benchmark::State& state) {
  const auto nodes = static_cast<std::uint32_t>(state.range(0));
  auto config = *configs::load_scenario(configs::default_catalog_folder() + "/scenarios/shared-cluster-synthetic.json");
  const auto& llm = std::get<configs::LlmServingSpec>(config.serving);
  config.cluster.node_groups[0].count = nodes;
  auto shared_config = *configs::make_shared_cluster_config(config.cluster, llm, catalog());
  // Batch work fills the nodes: single-GPU LS and BE jobs that outlast the benchmark.
  std::vector<traces::BatchJobRecord> jobs;
  for (std::uint32_t i = 0; i < nodes * 8; ++i) {
    traces::BatchJobRecord job;
    job.name = "fill-" + std::to_string(i);
    job.arrival_s = 0;
    job.duration_s = 1e6;
    job.cpu = 4;
    job.memory_mb = 16'000;
    job.gpu = 1;
    job.job_class = i % 2 == 0 ? "LS" : "BE";
    jobs.push_back(job);
  }
  engine::Simulation sim(1);
  struct Sink final : cluster::RequestSink {
    void on_request_finished(const cluster::RequestRecord&) override {}
  } sink;
  cluster::LlmCluster serving(sim,
                              *configs::resolve_llm_cluster(std::get<configs::LlmServingSpec>(config.serving), catalog(),
                                                            /*place_start_state=*/false),
                              sink);
  auto shared = std::move(*shared::SharedCluster::create(sim, serving, shared_config, jobs, {{cluster::InstanceTag::kMixed, 1}}));
  cluster::ScalingConfig scaling;
  scaling.scale_up_delay = engine::SimTime::from_seconds(1);
  scaling.max_total_instances = 100'000;
  cluster::ScalingManager manager(sim, serving, scaling, shared.get());
  shared->start();
  sim.run_until(engine::SimTime::from_seconds(1));
  std::vector<double> samples_us, per_operation_us, up_us, down_us;
  bool up = true;
  std::uint32_t instances = 1;
  for (auto _ : state) {
    // Scale up to a quarter of the cluster's GPUs, then back down to one, and again.
    const auto preempted_before = shared->batch().counts().preemptions;
    const auto start = Clock::now();
    const bool acted = up ? static_cast<bool>(manager.scale_up_full(cluster::InstanceTag::kMixed))
                          : static_cast<bool>(manager.scale_down(cluster::InstanceTag::kMixed));
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    samples_us.push_back(us);
    (up ? up_us : down_us).push_back(us);
    // The core operations it took: the placement or release, and each preemption.
    per_operation_us.push_back(us / static_cast<double>(1 + shared->batch().counts().preemptions - preempted_before));
    state.PauseTiming();
    instances = up ? instances + acted : instances - acted;
    if (up && instances * 4 >= nodes * 8 / 4) up = false;
    if (!up && instances == 1) up = true;
    sim.run_until(sim.now() + engine::SimTime::from_seconds(2));  // activations, drains, requeued jobs
    state.ResumeTiming();
  }
  const auto quantile = [](std::vector<double>& samples, double q) {
    std::sort(samples.begin(), samples.end());
    return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))];
  };
  state.counters["p50_us"] = quantile(samples_us, 0.5);
  state.counters["p99_us"] = quantile(samples_us, 0.99);
  state.counters["up_p50_us"] = quantile(up_us, 0.5);
  state.counters["up_p99_us"] = quantile(up_us, 0.99);
  state.counters["down_p99_us"] = quantile(down_us, 0.99);
  state.counters["p99_us_per_core_op"] = quantile(per_operation_us, 0.99);
  state.counters["batch_preemptions"] = static_cast<double>(shared->batch().counts().preemptions);
  state.counters["nodes"] = nodes;
}

}  // namespace

BENCHMARK(BM_SharedClusterReplay)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_ScalingDecisionThroughCore)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond)->Iterations(4000);
