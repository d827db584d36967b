#include "configs/scenario_run.hpp"

#include "sim/engine/check.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::configs {

using nlohmann::json;

Expected<std::unique_ptr<ScenarioRun>> ScenarioRun::create(const ScenarioConfig& config,
                                                           const std::string& config_file, const Catalog& catalog,
                                                           replay::ReplayObserver& observer, RunHooks hooks) {
  const auto in_file = [&](const Error& error) { return Error{config_file + ": " + error.message}; };
  const bool fixed = config.cluster.mode == ClusterMode::kFixed;
  const auto* llm = std::get_if<LlmServingSpec>(&config.serving);
  if ((fixed || config.autoscaler.policy != AutoscalerPolicy::kNone || hooks.driver_scales) && llm == nullptr) {
    return in_file(Error{"scaling and shared clusters need the llm serving model (serving.kind: llm)"});
  }
  // A shared cluster places the start state through the scheduling core itself.
  auto factory = make_serving_factory(config.serving, catalog, /*place_start_state=*/!fixed);
  if (!factory) return in_file(factory.error());
  std::unique_ptr<ScenarioRun> run(new ScenarioRun(config.seed));
  if (hooks.source) {
    run->source_ = std::move(hooks.source);
  } else {
    auto source = traces::open_workload(config.workload, config.seed);
    if (!source) return source.error();
    run->source_ = std::move(*source);
  }
  run->workload_ = run->source_->describe();
  const replay::ServingFactory with_timeline = [&](engine::Simulation& s, cluster::RequestSink& sink) {
    auto system = (*factory)(s, sink);
    system->set_activity_sink(hooks.timeline);
    return system;
  };
  run->replay_ = std::make_unique<replay::Replay>(run->sim_, *run->source_, with_timeline, config.replay, observer);

  cluster::InstancePlacement* placement = nullptr;
  if (fixed) {
    auto shared_config = make_shared_cluster_config(config.cluster, *llm, catalog);
    if (!shared_config) return in_file(shared_config.error());
    auto jobs = load_batch_jobs(config.cluster, config.seed);
    if (!jobs) return jobs.error();
    auto& llm_cluster = dynamic_cast<cluster::LlmCluster&>(run->replay_->serving());
    auto shared = cluster::SharedCluster::create(run->sim_, llm_cluster, std::move(*shared_config), std::move(*jobs),
                                                 llm->start_state);
    if (!shared) return in_file(Error{"cluster: " + shared.error().message});
    run->shared_ = std::move(*shared);
    run->shared_->set_activity_sink(hooks.timeline);
    placement = run->shared_.get();
    // The batch columns of the time series: GPUs held (mean over the row), jobs running
    // and queued at its end, preemptions during it.
    const cluster::SharedCluster* shared_cluster = run->shared_.get();
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
    run->scaling_ = std::make_unique<autoscale::ScalingHarness>(run->sim_, *run->replay_, config.scaling.manager,
                                                                nullptr, placement);
    if (hooks.scaling_log) run->scaling_->manager().set_log(hooks.scaling_log);
  } else if (config.autoscaler.policy != AutoscalerPolicy::kNone) {
    std::unique_ptr<traces::RequestSource> lookahead = std::move(hooks.lookahead);
    if (config.autoscaler.policy == AutoscalerPolicy::kOracle && !lookahead) {
      // The oracle's own copy of the workload (the same seed gives the same stream).
      auto copy = traces::open_workload(config.workload, config.seed);
      if (!copy) return copy.error();
      lookahead = std::move(*copy);
    }
    run->scaling_ = std::make_unique<autoscale::ScalingHarness>(
        run->sim_, *run->replay_, manager_config(config.scaling, config.autoscaler),
        make_autoscaler(config.autoscaler, llm->start_state, config.replay.slo.tbt, std::move(lookahead)), placement);
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

json ScenarioRun::scaling_summary(const replay::ReplayResult& result) const {
  if (!scaling_) return nullptr;
  const auto& counts = scaling_->manager().counts();
  const double hours = result.end_time.seconds() / 3600.0;
  return json{{"autoscaler", scaling_->policy()->name()},
              {"decisions", scaling_->decisions()},
              {"mean_instances", hours > 0 ? result.instance_hours / hours : 0.0},
              {"scale_ups", counts.scale_ups},
              {"scale_downs", counts.scale_downs},
              {"blocked", counts.blocked},
              {"instances_removed", counts.instances_removed},
              {"servers_removed", counts.servers_removed},
              {"evacuations", counts.evacuations},
              {"instance_migrations", counts.migrations},
              {"migrations", replay_->metrics().migrations()}};
}

json ScenarioRun::batch_summary(const replay::ReplayResult& result) const {
  if (!shared_) return nullptr;
  const auto& batch = shared_->batch();
  const auto& c = batch.counts();
  const auto stats = shared_->core().get_preemption_stats();
  const double held = batch.held_gpu_s(result.end_time) / 3600.0;
  const double useful = c.useful_gpu_s / 3600.0;
  const double lost = c.lost_gpu_s / 3600.0;
  json reasons = json::object();
  for (const auto& [key, count] : shared_->core().metrics().preemption_count) {
    reasons[key.second] = reasons.value(key.second, std::uint64_t{0}) + count;
  }
  return json{{"jobs",
               {{"arrived", c.arrived},
                {"completed", c.completed},
                {"running", c.running},
                {"stopping", c.stopping},
                {"queued", c.queued},
                {"failed", c.failed}}},
              {"starts", c.starts},
              {"preemptions", c.preemptions},
              {"requeues", c.requeues},
              {"hung_agents", c.hung_agents},
              {"preemptions_by_reason", reasons},
              {"core_preemptions", stats.total_preemptions},
              {"gpu_hours",
               {{"held", held}, {"useful", useful}, {"lost", lost}, {"in_progress", held - useful - lost}}},
              // Of the batch work that ended (finished, checkpointed or preempted), the
              // share lost to preemption.
              {"lost_share", useful + lost > 0 ? lost / (useful + lost) : 0.0},
              {"nodes", shared_->config().nodes.size()}};
}

}  // namespace meshsim::configs
