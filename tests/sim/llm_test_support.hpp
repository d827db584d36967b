#pragma once

// Helpers for LlmCluster tests: a round-number performance model, a small deployment,
// a list of requests as a source, and a replay that keeps everything it reports.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/scaling_manager.hpp"
#include "sim/replay/replay.hpp"
#include "traces/list_source.hpp"

namespace meshsim::cluster::testing {

// MESHSIM_PROPERTY_CASES raises the number of cases of a property test for a longer local run.
inline int case_count(int default_count) {
  const char* env = std::getenv("MESHSIM_PROPERTY_CASES");
  return env != nullptr ? std::max(1, std::atoi(env)) : default_count;
}

// Prefill `prefill_base` ms + 1 ms per `prefill_per_ms` tokens; decode `decode_base` ms +
// 1 ms per `decode_per_ms` context tokens; a mixed iteration is the sum. The defaults are
// round numbers; coarse ones make equal times (ties between events) common.
class SimplePerf final : public PerfModel {
 public:
  SimplePerf(double prefill_base = 10.0, double prefill_per_ms = 100.0, double decode_base = 20.0,
             double decode_per_ms = 1000.0, RequestCosts costs = {})
      : prefill_base_(prefill_base), prefill_per_ms_(prefill_per_ms), decode_base_(decode_base),
        decode_per_ms_(decode_per_ms), costs_(costs) {}
  RequestCosts request_costs() const override { return costs_; }
  double prefill_ms(const PrefillWork& w) const override {
    return prefill_base_ + static_cast<double>(w.tokens) / prefill_per_ms_;
  }
  double decode_ms(const DecodeWork& w) const override {
    return decode_base_ + static_cast<double>(w.context_tokens) / decode_per_ms_;
  }
  double iteration_ms(const PrefillWork& p, const DecodeWork& d) const override {
    if (p.tokens == 0) return decode_ms(d);
    if (d.batch == 0) return prefill_ms(p);
    return prefill_ms(p) + decode_ms(d);
  }

 private:
  double prefill_base_, prefill_per_ms_, decode_base_, decode_per_ms_;
  RequestCosts costs_;
};

inline LlmClusterConfig base_config(std::vector<InstanceGroup> groups) {
  LlmClusterConfig config;
  config.model = ModelSpec{.name = "toy", .parameters = 1e9, .layers = 8, .hidden = 1024, .heads = 8, .kv_heads = 8, .dtype_bytes = 2, .hf_id = {}, .experts = 0, .experts_per_token = 0, .expert_parameters = 0};
  config.sku = SkuSpec{.name = "toy-gpu", .gpus_per_node = 8, .hbm_gib_per_gpu = 80, .peak_tflops = 100, .hbm_tb_per_s = 1, .nvlink_gb_per_s = 100, .network_gb_per_s = 10, .power_kw = 1, .cost_per_hour = 8.0, .aliases = {}};
  config.tensor_parallel = 8;
  config.perf = std::make_shared<SimplePerf>();
  config.start_state = std::move(groups);
  config.kv_capacity_tokens = 100'000;
  return config;
}

using traces::ListSource;

// Everything a replay reported, in the order it reported it.
struct RunResult {
  std::vector<RequestRecord> in_order;       // requests.csv's rows
  std::map<std::uint64_t, RequestRecord> records;
  std::vector<metrics::TimeseriesRow> rows;  // timeseries.csv's rows
  metrics::RequestCounts counts;
  std::uint64_t events = 0;                  // handled by the cluster
  ScalingCounts scaling;                     // run_scaled only
  std::vector<std::string> log;              // run_scaled only: the ScalingManager's lines
};

class Collector final : public replay::ReplayObserver {
 public:
  void on_request(const RequestRecord& record) override {
    result.in_order.push_back(record);
    result.records[record.id] = record;
  }
  void on_interval(const metrics::TimeseriesRow& row) override { result.rows.push_back(row); }
  RunResult result;
};

inline RunResult run(const LlmClusterConfig& config, traces::RequestSource& source,
                     replay::ReplayOptions options = {}) {
  engine::Simulation sim(1);
  Collector collector;
  replay::Replay replay(sim, source, llm_cluster_factory(config), options, collector);
  auto outcome = replay.run();
  if (!outcome) throw std::runtime_error(outcome.error().message);
  RunResult result = std::move(collector.result);
  result.counts = replay.metrics().counts();
  result.events = dynamic_cast<const LlmCluster&>(replay.serving()).events_handled();
  return result;
}

// A scaling action at a fixed time: scale `tag` up (scale_up_full), down (the
// least-loaded ACTIVE instance of `tag`) or migrate that instance to the other of the
// prompt and token pools (blocked for mixed).
struct ScalingAction {
  enum class Kind { kUp, kDown, kMigrate };
  SimTime at;
  Kind kind = Kind::kUp;
  InstanceTag tag = InstanceTag::kMixed;
};

// run() with a ScalingManager over the cluster, taking `actions` at their times (blocked
// ones are counted, as the manager does).
inline RunResult run_scaled(const LlmClusterConfig& config, traces::RequestSource& source,
                            replay::ReplayOptions options, const ScalingConfig& scaling,
                            const std::vector<ScalingAction>& actions) {
  struct Driver final : engine::EventHandler {
    ScalingManager* manager = nullptr;
    const LlmCluster* cluster = nullptr;
    const std::vector<ScalingAction>* actions = nullptr;
    void on_event(const engine::EventPayload& payload) override {
      const ScalingAction& action = (*actions)[payload.a];
      switch (action.kind) {
        case ScalingAction::Kind::kUp: (void)manager->scale_up_full(action.tag); break;
        case ScalingAction::Kind::kDown: (void)manager->scale_down(action.tag); break;
        case ScalingAction::Kind::kMigrate:
          (void)manager->migrate_pool(action.tag, action.tag == InstanceTag::kPrompt ? InstanceTag::kToken
                                                                                     : InstanceTag::kPrompt);
          break;
      }
      // The invariant checker after every action: bookkeeping drift fails the run.
      for (const auto& problem : cluster->check_invariants()) throw std::logic_error(problem);
    }
  };
  engine::Simulation sim(1);
  Collector collector;
  LlmCluster* cluster = nullptr;
  replay::ServingFactory factory = [&](engine::Simulation& s, RequestSink& sink) {
    auto made = std::make_unique<LlmCluster>(s, config, sink);
    cluster = made.get();
    return std::unique_ptr<ServingSystem>(std::move(made));
  };
  replay::Replay replay(sim, source, factory, options, collector);
  ScalingManager manager(sim, *cluster, scaling);
  std::vector<std::string> log;
  manager.set_log([&](std::string_view line) { log.emplace_back(line); });
  Driver driver;
  driver.manager = &manager;
  driver.cluster = cluster;
  driver.actions = &actions;
  for (std::uint64_t i = 0; i < actions.size(); ++i) sim.schedule_at(actions[i].at, driver, engine::EventPayload{i, 0});
  auto outcome = replay.run();
  if (!outcome) throw std::runtime_error(outcome.error().message);
  for (const auto& problem : cluster->check_invariants()) throw std::logic_error(problem);
  RunResult result = std::move(collector.result);
  result.counts = replay.metrics().counts();
  result.events = cluster->events_handled();
  result.scaling = manager.view().counts();
  result.log = std::move(log);
  return result;
}

}  // namespace meshsim::cluster::testing
