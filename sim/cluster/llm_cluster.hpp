#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/batching/instance_engine.hpp"
#include "sim/cluster/first_token_watch.hpp"
#include "sim/cluster/llm_cluster_config.hpp"
#include "sim/cluster/pool_ledger.hpp"
#include "sim/cluster/pool_router.hpp"
#include "sim/cluster/server_pool.hpp"
#include "sim/cluster/serving_hardware.hpp"
#include "sim/cluster/serving_options.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/timer.hpp"
#include "sim/metrics/level_integral.hpp"

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
  std::uint32_t instances() const override { return existing_; }
  InstanceCounts instance_counts() const override;
  std::uint64_t kv_used_tokens() const override;
  std::uint64_t kv_total_tokens() const override { return serving_kv_tokens_; }
  std::vector<PrefixCacheCounts> prefix_cache_by_instance() const override;
  Usage usage() const override;
  void for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const override;
  FirstTokenBacklog awaiting_first_token(SimTime cutoff) const override;
  void set_activity_sink(ActivitySink* sink) override;
  std::string describe_waiting() const override;

  const LlmClusterConfig& config() const { return config_; }
  SimTime now() const { return sim_.now(); }
  // The pools' hardware: what prices their iterations, their SKU, TP degree and KV capacity.
  const ServingHardware& hardware() const { return hardware_; }
  // The servers instances run on: the placements add and remove them.
  ServerPool& servers() { return servers_; }
  const ServerPool& servers() const { return servers_; }
  // The pools' instances by state, arrivals and INACTIVE instances, in O(1).
  const PoolLedger& pools() const { return pools_; }
  // Events handled so far by this cluster (iteration ends and KV transfers): shows folding.
  std::uint64_t events_handled() const { return events_handled_; }

  // --- Servers and the instance lifecycle (llm_lifecycle.cpp). Ids are stable and never
  // reused. A call out of order (draining a STARTING instance, removing a busy one) is a
  // programming error (std::logic_error); a request the cluster may refuse returns Error.
  struct InstanceView {
    std::uint32_t id = 0;
    InstanceTag tag = InstanceTag::kMixed;
    InstanceState state = InstanceState::kActive;
    std::optional<std::uint32_t> server;  // none when INACTIVE
    std::int64_t requests = 0;        // assigned and not finished (includes KV transfers in flight)
    std::uint32_t running = 0;        // in the batch running now
    std::int64_t pending_tokens = 0;  // prompt tokens not yet prefilled + 1 per request decoding
    std::uint64_t kv_used = 0;        // KV tokens held now
    bool evacuating = false;
  };
  // The id add_instance gives next.
  std::uint32_t next_instance_id() const { return static_cast<std::uint32_t>(instances_.size()); }
  // A new STARTING instance on `server`, which must be of its pool's hardware and have
  // room for it.
  std::uint32_t add_instance(InstanceTag tag, std::uint32_t server);
  // STARTING -> ACTIVE: routed to from now.
  void activate(std::uint32_t instance);
  // ACTIVE -> DRAINING. Refused when it would leave no ACTIVE instance to route a pool's
  // requests to (the prompt pool always; the token pool while prompt instances exist).
  Status drain(std::uint32_t instance);
  // DRAINING: the instance's remaining requests move to ACTIVE instances, at once if it
  // is idle, else one microsecond after its running batch's next iteration boundary;
  // those with KV here recompute it there (counted in RequestRecord::migrations). KV
  // transfers still on their way move when they land. Call it from an ordinary event
  // (as the ScalingManager does), not from inside the cluster's own.
  void evacuate(std::uint32_t instance);
  // DRAINING with nothing assigned: ready for deactivate().
  bool drained(std::uint32_t instance) const;
  // Each DRAINING instance that becomes drained is reported to `listener` once, at that
  // moment (the ScalingManager's drain checks then read only those, never walking every
  // draining instance).
  void set_drained_listener(std::function<void(std::uint32_t)> listener) { drained_listener_ = std::move(listener); }
  // Drained DRAINING -> INACTIVE: the KV cache is flushed and the instance leaves its
  // server (returned: the caller releases it when idle).
  std::uint32_t deactivate(std::uint32_t instance);
  // Drained DRAINING -> ACTIVE in the other of the prompt and token pools, on the same
  // server (seed 004's migration): the KV cache is flushed; no weights load, since both
  // roles run the same model, so it is routed to at once. Both pools must run on the same
  // hardware.
  void retag(std::uint32_t instance, InstanceTag tag);
  // INACTIVE -> STARTING on `server` (reactivation passes through STARTING again).
  void restart(std::uint32_t instance, std::uint32_t server);
  // INACTIVE or STARTING -> removed; a STARTING one leaves its server (returned).
  std::optional<std::uint32_t> remove_instance(std::uint32_t instance);
  // Instances that hold a server (STARTING, ACTIVE or DRAINING).
  std::uint32_t attached_instances() const { return attached_; }
  // The requests assigned to a pool's ACTIVE instances (running or waiting) and their
  // pending prompt tokens: O(1) once track_active_loads() is on, else a walk over them.
  ActiveLoad active_load(InstanceTag tag) const;
  // Keeps the pools' ACTIVE loads up to date as they change, for O(1) scaling decisions
  // (the ScalingManager turns it on). Off by default: at 400 instances the updates cost a
  // serving-only replay a quarter of its speed.
  void track_active_loads();
  // The ACTIVE instance of `tag` a scale-down takes: prompt and mixed by fewest pending
  // prompt tokens, token by least KV memory held or promised to its requests; ties to the
  // lowest id. None when the pool has no ACTIVE instance. A walk over the ACTIVE
  // instances (scale-downs are rare; an index kept for them would cost every request).
  std::optional<std::uint32_t> least_loaded(InstanceTag tag) const;
  std::optional<InstanceView> instance(std::uint32_t id) const;
  // O(1) (instance() also walks the running segment for its KV use): the state and tag
  // of an instance that exists.
  std::optional<InstanceState> state_of(std::uint32_t id) const;
  InstanceTag tag_of(std::uint32_t id) const;
  // The lifecycle's bookkeeping agrees with the instances (pool totals and routers hold
  // exactly the ACTIVE ones, server loads, counts, no request on an
  // INACTIVE instance); empty when all is well. O(instances): for tests and --check.
  std::vector<std::string> check_invariants() const;
  // Existing instances, by id.
  std::vector<InstanceView> instance_views() const;

 private:
  struct Instance;
  struct Live;
  enum EventKind : std::uint64_t { kIterationEnd, kTransferDone, kMigrate, kAdmit, kDeadline };

  // llm_cluster.cpp: requests, routing, the Splitwise flow, accounting.
  void on_event(const engine::EventPayload& payload) override;
  PoolRouter& router_for(InstanceTag tag) { return tag == InstanceTag::kToken ? token_router_ : prompt_router_; }
  const PoolRouter& router_for(InstanceTag tag) const {
    return tag == InstanceTag::kToken ? token_router_ : prompt_router_;
  }
  // Routes a submitted request to an instance's queue (after its pre-queue cost).
  void admit(std::uint32_t slot);
  void assign(std::uint32_t instance, std::uint32_t slot);
  // Undoes assign() and the KV the request holds on its instance.
  void unassign(std::uint32_t slot);
  // Aborts the requests on an instance whose deadline has passed.
  void abort_expired(std::uint32_t instance);
  void refresh_load(std::uint32_t instance);
  // The prompt pool's instance for the request in `slot` (its prompt_routing policy).
  std::uint32_t route_prompt(std::uint32_t slot);
  void count_active_load(Instance& in);
  void wake(std::uint32_t instance);
  // Reports the instance to the drained listener if it has just become drained.
  void report_if_drained(std::uint32_t instance);
  void prefill_done(std::uint32_t instance, std::uint32_t slot);
  void arrive_for_decode(std::uint32_t instance, std::uint32_t slot);
  // Queues a request to be prefilled (or recomputed) on `instance`.
  void enqueue_prefill(std::uint32_t instance, std::uint32_t slot);
  void finish(std::uint32_t slot, metrics::RequestStatus status);
  std::string describe(std::uint32_t instance) const;

  // llm_lifecycle.cpp: states, servers and evacuation.
  Instance& existing(std::uint32_t instance, const char* call);
  void set_state(std::uint32_t instance, InstanceState state);
  void migrate_all(std::uint32_t instance);
  void migrate(std::uint32_t from, std::uint32_t slot);
  void account_levels();
  void attach(Instance& in, std::uint32_t server);
  std::uint32_t detach(Instance& in);
  static constexpr std::uint32_t kNoServer = ~0u;

  // llm_steps.cpp: each instance's steps, formed by its engine, timed by its hardware's
  // performance model, decode runs folded into one event.
  void start_step(std::uint32_t instance);
  void end_step(std::uint32_t instance);
  void close_segment(std::uint32_t instance);
  void interrupt_fold(Instance& in);
  const InstanceHardware& hardware_of(const Instance& in) const;

  engine::Simulation& sim_;
  LlmClusterConfig config_;
  RequestSink& sink_;
  ServingHardware hardware_;
  ServerPool servers_;
  // The largest request (prompt and output tokens) every start-state pool's instances can
  // hold: one longer is dropped at arrival.
  std::uint64_t kv_fit_tokens_ = 0;
  RequestCosts request_costs_;
  // Instances by id, never freed (a removed one keeps its timer, which stale events in
  // the queue still point to); `removed` marks the gone.
  std::vector<std::unique_ptr<Instance>> instances_;
  std::uint64_t attached_gpus_ = 0;   // of the instances on servers
  std::uint64_t serving_kv_tokens_ = 0;  // KV capacity of the instances serving
  std::uint32_t existing_ = 0;  // instances not removed
  std::uint32_t attached_ = 0;  // instances on a server (STARTING, ACTIVE, DRAINING)
  std::uint32_t serving_ = 0;   // ACTIVE or DRAINING: capacity that serves
  std::uint32_t prompt_side_ = 0;  // prompt-tag instances not removed (they need token instances)
  PoolRouter prompt_router_;       // ACTIVE prompt and mixed instances
  PoolRouter token_router_;        // ACTIVE token instances
  PoolLedger pools_;
  std::vector<Live> live_;  // by request slot
  Sequences seqs_;          // by request slot: what the instances' engines read and write
  std::vector<std::uint32_t> free_slots_;
  StepOutcome outcome_;  // reused by step ends
  std::uint64_t in_system_ = 0;
  FirstTokenWatch first_tokens_;  // requests in the system without their first token
  std::uint64_t running_ = 0;
  std::int64_t useful_done_ns_ = 0;  // useful work of the iterations ended so far (see useful_ns)
  std::int64_t busy_done_us_ = 0;    // instance-microseconds of the segments ended so far
  metrics::LevelIntegral capacity_;  // instances serving (ACTIVE or DRAINING)
  metrics::LevelIntegral gpus_;      // GPUs of the instances on servers
  metrics::LevelIntegral attached_level_;  // instances on servers
  metrics::LevelIntegral cost_;      // USD per microsecond of the servers
  std::uint64_t events_handled_ = 0;
  ActivitySink* activity_ = nullptr;
  std::function<void(std::uint32_t)> drained_listener_;
};

// What a Replay builds its serving system with (replay::ServingFactory): an LlmCluster
// with `config`. `built`, when given, receives the cluster it builds: the typed handle
// for whoever scales or shares it (the replay owns it).
std::function<std::unique_ptr<ServingSystem>(engine::Simulation&, RequestSink&)> llm_cluster_factory(
    LlmClusterConfig config, LlmCluster** built = nullptr);

}  // namespace meshsim::cluster
