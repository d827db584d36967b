#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/batching/instance_engine.hpp"
#include "sim/cluster/first_token_watch.hpp"
#include "sim/cluster/instance_fleet.hpp"
#include "sim/cluster/instance_placement.hpp"
#include "sim/cluster/llm_cluster_config.hpp"
#include "sim/cluster/serving_options.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/engine/simulation.hpp"

namespace meshsim::cluster {

// LLM serving on simulated GPU instances: prefill and decode in continuous batches priced
// by a PerfModel, KV-cache capacity per instance, the Splitwise flow (prefill on a prompt
// instance, KV transfer, decode on a token instance) or both phases on a mixed instance,
// and routing by a PoolRouter per pool. Instances live on servers of the SKU and come and
// go through the lifecycle calls (driven by the ScalingManager); those of the start state
// are ACTIVE from the start.
//
// Guarantees (tests/sim/llm_cluster_property_test.cpp checks them on random
// configurations, with random scaling): every request completes or is dropped, whatever
// the capacities, budgets and scaling (no KV deadlock in either allocation mode; a
// request on an evacuated instance moves, it is never lost); results do not depend on
// fold_decode; work per request does not grow with queue lengths or output lengths.
class LlmCluster final : public ServingSystem, private engine::EventHandler {
 public:
  LlmCluster(engine::Simulation& sim, LlmClusterConfig config, RequestSink& sink);
  ~LlmCluster() override;

  void submit(const traces::TraceRequest& request) override;
  std::uint64_t queued() const override { return in_system_ - running_; }
  std::uint64_t running() const override { return running_; }
  std::uint32_t instances() const override { return fleet_.counts().existing; }
  InstanceCounts instance_counts() const override { return fleet_.pools().counts(); }
  std::uint64_t kv_used_tokens() const override;
  std::uint64_t kv_total_tokens() const override { return fleet_.counts().serving_kv_tokens; }
  std::vector<PrefixCacheCounts> prefix_cache_by_instance() const override;
  Usage usage() const override;
  void for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const override;
  FirstTokenBacklog awaiting_first_token(SimTime cutoff) const override;
  void set_activity_sink(ActivitySink* sink) override;
  std::string describe_waiting() const override;

  const LlmClusterConfig& config() const { return config_; }
  // The instances, their lifecycle, servers, hardware and pool books: the ScalingManager
  // changes them through it (instance_fleet.hpp); outside sim/cluster, ScalingView reads.
  InstanceFleet& fleet() { return fleet_; }
  const InstanceFleet& fleet() const { return fleet_; }
  // A start-state instance its owner places (a shared cluster, through the scheduling
  // core, on a cluster resolved without its start state): `placement` is asked where the
  // next instance goes, which is then ACTIVE at once. Its id, or why it has no room.
  Expected<std::uint32_t> add_placed_instance(InstanceTag tag, InstancePlacement& placement);
  // Every existing instance as the scaling side sees it, by id.
  std::vector<InstanceView> instance_views() const { return fleet_.views(); }
  // Events handled so far by this cluster (iteration ends and KV transfers): shows folding.
  std::uint64_t events_handled() const { return events_handled_; }

  // DRAINING: the instance's remaining requests move to ACTIVE instances, at once if it
  // is idle, else one microsecond after its running batch's next iteration boundary;
  // those with KV here recompute it there (counted in RequestRecord::migrations). KV
  // transfers still on their way move when they land. Call it from an ordinary event
  // (as the ScalingManager does), not from inside the cluster's own.
  void evacuate(std::uint32_t instance);
  // The fleet's books and every request slot agree; empty when all is well. O(instances):
  // for tests and --check.
  std::vector<std::string> check_invariants() const;

 private:
  struct Live;
  enum EventKind : std::uint64_t { kIterationEnd, kTransferDone, kMigrate, kAdmit, kDeadline, kHostLoad };

  // llm_cluster.cpp: requests, routing, the Splitwise flow, accounting.
  void on_event(const engine::EventPayload& payload) override;
  // Routes a submitted request to an instance's queue (after its pre-queue cost).
  void admit(std::uint32_t slot);
  void assign(std::uint32_t instance, std::uint32_t slot);
  // Undoes assign() and the KV the request holds on its instance.
  void unassign(std::uint32_t slot);
  // Aborts the requests on an instance whose deadline has passed.
  void abort_expired(std::uint32_t instance);
  // The prompt pool's instance for the request in `slot` (its prompt_routing policy).
  std::uint32_t route_prompt(std::uint32_t slot);
  void wake(std::uint32_t instance);
  void prefill_done(std::uint32_t instance, std::uint32_t slot);
  void arrive_for_decode(std::uint32_t instance, std::uint32_t slot);
  // Queues a request to be prefilled (or recomputed) on `instance`.
  void enqueue_prefill(std::uint32_t instance, std::uint32_t slot);
  void finish(std::uint32_t slot, metrics::RequestStatus status);
  std::string describe(std::uint32_t instance) const;

  // llm_evacuation.cpp: a draining instance's requests move.
  void migrate_all(std::uint32_t instance);
  void migrate(std::uint32_t from, std::uint32_t slot);

  // llm_steps.cpp: each instance's steps, formed by its engine, timed by its hardware's
  // performance model, decode runs folded into one event.
  void start_step(std::uint32_t instance);
  void end_step(std::uint32_t instance);
  void close_segment(std::uint32_t instance);
  void interrupt_fold(ServingInstance& in);

  engine::Simulation& sim_;
  LlmClusterConfig config_;
  RequestSink& sink_;
  Sequences seqs_;  // by request slot: what the instances' engines read and write
  InstanceFleet fleet_;
  // The largest request (prompt and output tokens) every start-state pool's instances can
  // hold: one longer is dropped at arrival.
  std::uint64_t kv_fit_tokens_ = 0;
  RequestCosts request_costs_;
  std::vector<Live> live_;  // by request slot
  std::vector<std::uint32_t> free_slots_;
  StepOutcome outcome_;  // reused by step ends
  std::uint64_t in_system_ = 0;
  FirstTokenWatch first_tokens_;  // requests in the system without their first token
  std::uint64_t running_ = 0;
  std::int64_t useful_done_ns_ = 0;  // useful work of the iterations ended so far (see useful_ns)
  std::int64_t busy_done_us_ = 0;    // instance-microseconds of the segments ended so far
  std::uint64_t events_handled_ = 0;
  ActivitySink* activity_ = nullptr;
};

// What a Replay builds its serving system with (replay::ServingFactory): an LlmCluster
// with `config`. `built`, when given, receives the cluster it builds: the typed handle
// for whoever scales or shares it (the replay owns it).
std::function<std::unique_ptr<ServingSystem>(engine::Simulation&, RequestSink&)> llm_cluster_factory(
    LlmClusterConfig config, LlmCluster** built = nullptr);

}  // namespace meshsim::cluster
