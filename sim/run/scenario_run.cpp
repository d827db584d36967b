#include "sim/run/scenario_run.hpp"

#include <cmath>
#include <cstdio>

#include "configs/cluster_config.hpp"
#include "configs/process_memory.hpp"
#include "sim/cluster/fixed_latency_cluster.hpp"
#include "sim/cluster/llm_cluster.hpp"
#include "sim/shared/shared_cluster.hpp"
#include "sim/engine/check.hpp"
#include "sim/run/autoscaler_builder.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::run {

ScenarioRun::ScenarioRun(std::uint64_t seed, replay::ReplayObserver& observer) : sim_(seed), observers_(observer) {}
// The autoscaler goes before the replay that reports to it: nothing may reach it then.
ScenarioRun::~ScenarioRun() { observers_.set_watcher(nullptr); }

void ScenarioRun::Observers::on_arrival(const traces::TraceRequest& request) {
  driver_.on_arrival(request);
  if (watcher_ != nullptr) watcher_->on_arrival(request);
}

void ScenarioRun::Observers::on_request(const metrics::RequestRecord& record) {
  driver_.on_request(record);
  if (watcher_ != nullptr) watcher_->on_request(record);
}

using configs::AutoscalerPolicy;
using configs::ClusterMode;
using configs::LlmServingSpec;

namespace {

// What a request in the system costs while it waits or runs (its record, queue entries and
// sequence state): about 590 B measured at 1M and 4M queued requests.
constexpr double kBytesPerRequestInSystem = 600;

// The bound on requests in the system is a bound on memory: one the process could not
// hold (half of what it may use, the rest for the trace, metrics and the engine) is
// refused before the run rather than ending in an allocation failure under a burst.
Status fits_memory(const LlmServingSpec& llm) {
  const auto [allowance, source] = configs::process_memory_allowance();
  const double needed = static_cast<double>(llm.max_requests_in_system) * kBytesPerRequestInSystem;
  if (needed <= allowance / 2) return Ok{};
  char text[400];
  std::snprintf(text, sizeof text,
                "serving.max_requests_in_system: %llu requests in the system could take about %.1f GB (about %.0f B "
                "each), more than half of the %.1f GB this process may use (%s); expected at most %.0f",
                static_cast<unsigned long long>(llm.max_requests_in_system), needed / 1e9, kBytesPerRequestInSystem,
                allowance / 1e9, source.c_str(), std::floor(allowance / 2 / kBytesPerRequestInSystem));
  return Error{text};
}

}  // namespace

Status ScenarioRun::check(const configs::ScenarioConfig& config, const configs::Catalog& catalog) {
  const auto* llm = std::get_if<LlmServingSpec>(&config.serving);
  if (llm == nullptr) return Ok{};
  if (auto fits = fits_memory(*llm); !fits) return fits;
  const bool fixed = config.cluster.mode == ClusterMode::kFixed;
  if (auto resolved = configs::resolve_llm_cluster(*llm, catalog, /*place_start_state=*/!fixed); !resolved) {
    return resolved.error();
  }
  return Ok{};
}

Expected<std::unique_ptr<ScenarioRun>> ScenarioRun::create(const configs::ScenarioConfig& config,
                                                           const std::string& config_file,
                                                           const configs::Catalog& catalog,
                                                           replay::ReplayObserver& observer, RunHooks hooks) {
  const auto in_file = [&](const Error& error) { return Error{config_file + ": " + error.message}; };
  const bool fixed = config.cluster.mode == ClusterMode::kFixed;
  const auto* llm = std::get_if<LlmServingSpec>(&config.serving);
  if ((fixed || config.autoscaler.policy != AutoscalerPolicy::kNone || hooks.driver_scales) && llm == nullptr) {
    return in_file(Error{"scaling and shared clusters need the llm serving model (serving.kind: llm)"});
  }
  std::unique_ptr<ScenarioRun> run(new ScenarioRun(config.seed, observer));
  // The serving system the replay builds; an LlmCluster is handed back typed (run->llm_)
  // for the scaling manager and the shared cluster.
  replay::ServingFactory factory;
  if (llm != nullptr) {
    // A shared cluster places the start state through the scheduling core itself.
    if (auto fits = fits_memory(*llm); !fits) return in_file(fits.error());
    auto resolved = configs::resolve_llm_cluster(*llm, catalog, /*place_start_state=*/!fixed);
    if (!resolved) return in_file(resolved.error());
    factory = cluster::llm_cluster_factory(std::move(*resolved), &run->llm_);
  } else {
    const auto& fixed_latency = std::get<cluster::FixedLatencyConfig>(config.serving);
    factory = [fixed_latency](engine::Simulation& sim, cluster::RequestSink& sink) {
      return std::unique_ptr<cluster::ServingSystem>(
          std::make_unique<cluster::FixedLatencyCluster>(sim, fixed_latency, sink));
    };
  }
  if (hooks.source) {
    run->source_ = std::move(hooks.source);
  } else {
    auto source = traces::open_workload(config.workload, config.seed);
    if (!source) return source.error();
    run->source_ = std::move(*source);
  }
  run->workload_ = run->source_->describe();
  const replay::ServingFactory with_timeline = [&](engine::Simulation& s, cluster::RequestSink& sink) {
    auto system = factory(s, sink);
    system->set_activity_sink(hooks.timeline);
    return system;
  };
  replay::ReplayOptions replay_options = config.replay;
  replay_options.max_concurrency = config.workload.max_concurrency;
  // A shared cluster's batch jobs run to the end the scenario sets, whenever the serving
  // workload ends (a rate scale compresses it); without one it ends with the serving.
  if (fixed && replay_options.until) replay_options.stop_when_served = false;
  run->replay_ = std::make_unique<replay::Replay>(run->sim_, *run->source_, with_timeline, replay_options, run->observers_);
  MESHSIM_CHECK((llm != nullptr) == (run->llm_ != nullptr), "the replay builds its serving system when constructed");

  cluster::InstancePlacement* placement = nullptr;
  if (fixed) {
    auto shared_config = configs::make_shared_cluster_config(config.cluster, *llm, catalog);
    if (!shared_config) return in_file(shared_config.error());
    auto jobs = configs::load_batch_jobs(config.cluster, config.seed);
    if (!jobs) return jobs.error();
    auto shared = shared::SharedCluster::create(run->sim_, *run->llm_, std::move(*shared_config), std::move(*jobs),
                                                 llm->start_state);
    if (!shared) return in_file(Error{"cluster: " + shared.error().message});
    run->shared_ = std::move(*shared);
    run->shared_->set_activity_sink(hooks.timeline);
    placement = run->shared_.get();
    // The batch columns of the time series: GPUs held (mean over the row), jobs running
    // and queued at its end, preemptions during it.
    const shared::SharedCluster* shared_cluster = run->shared_.get();
    auto last = std::make_shared<std::pair<double, std::uint64_t>>(0.0, 0);
    run->replay_->set_row_probe([shared_cluster, last](metrics::TimeseriesRow& row) {
      const auto& batch = shared_cluster->batch();
      const double held = batch.held_gpu_s(row.end);
      const double span = (row.end - row.start).seconds();
      row.batch_gpus = span > 0 ? (held - last->first) / span : 0.0;
      row.batch_running = batch.counts().running;
      row.batch_queued = batch.counts().queued;
      row.batch_preemptions = batch.counts().preemptions - last->second;
      *last = {held, batch.counts().preemptions};
    });
  }
  if (hooks.driver_scales) {
    run->scaling_ = std::make_unique<autoscale::ScalingHarness>(run->sim_, *run->replay_, *run->llm_,
                                                                config.scaling.manager, nullptr, placement);
    if (hooks.scaling_log) run->scaling_->manager().set_log(hooks.scaling_log);
  } else if (config.autoscaler.policy != AutoscalerPolicy::kNone) {
    std::unique_ptr<traces::RequestSource> lookahead = std::move(hooks.lookahead);
    if (config.autoscaler.policy == AutoscalerPolicy::kOracle && !lookahead) {
      // The oracle's own copy of the workload (the same seed gives the same stream).
      auto copy = traces::open_workload(config.workload, config.seed);
      if (!copy) return copy.error();
      lookahead = std::move(*copy);
    }
    auto policy = make_autoscaler(config.autoscaler, llm->start_state,
                                  metrics::slo_book(config.replay.slo, config.replay.classes), std::move(lookahead));
    run->observers_.set_watcher(policy ? policy->watcher() : nullptr);
    run->scaling_ = std::make_unique<autoscale::ScalingHarness>(
        run->sim_, *run->replay_, *run->llm_, configs::manager_config(config.scaling, config.autoscaler),
        std::move(policy), placement);
    if (hooks.scaling_log) run->scaling_->manager().set_log(hooks.scaling_log);
  }
  return run;
}

void ScenarioRun::start() {
  replay_->start();
  if (shared_) shared_->start();
  if (scaling_) scaling_->start();
}

Expected<replay::ReplayResult> ScenarioRun::finish() {
  auto result = replay_->finish();
  if (result && shared_) {
    const auto problems = shared_->check_invariants();
    MESHSIM_CHECK(problems.empty(), "the shared cluster ended inconsistent: " + problems.front());
  }
  return result;
}

}  // namespace meshsim::run
