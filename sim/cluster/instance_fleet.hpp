#pragma once

// The instances of one serving cluster and the books kept on them: their lifecycle
// (STARTING -> ACTIVE -> DRAINING -> INACTIVE -> removed), the servers they hold, the
// routers of the prompt and token pools (exactly the ACTIVE instances), the pool ledger,
// and the levels usage integrates (instances serving, on servers, their GPUs and cost).
// It never moves a request: LlmCluster routes and evacuates requests and times steps;
// the fleet keeps every lifecycle step safe (routing only ever picks ACTIVE instances,
// and a pool that takes requests always keeps one).
//
// Ids are stable and never reused. A call out of order (draining a STARTING instance,
// removing a busy one) is a programming error (std::logic_error); a request the fleet may
// refuse returns Error.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/instance_view.hpp"
#include "sim/cluster/llm_cluster_config.hpp"
#include "sim/cluster/pool_ledger.hpp"
#include "sim/cluster/pool_router.hpp"
#include "sim/cluster/server_pool.hpp"
#include "sim/cluster/serving_hardware.hpp"
#include "sim/cluster/serving_instance.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/metrics/level_integral.hpp"

namespace meshsim::cluster {

class InstanceFleet {
 public:
  // Kept as instances change.
  struct Counts {
    std::uint32_t existing = 0;     // not removed
    std::uint32_t attached = 0;     // on a server (STARTING, ACTIVE, DRAINING)
    std::uint32_t serving = 0;      // ACTIVE or DRAINING: capacity that serves
    std::uint32_t prompt_side = 0;  // prompt-tag instances not removed (they need token instances)
    std::uint64_t attached_gpus = 0;      // of the instances on servers
    std::uint64_t serving_kv_tokens = 0;  // KV capacity of the instances serving
  };
  // Levels over time, for usage integrals.
  struct Levels {
    metrics::LevelIntegral serving, gpus, attached, cost_per_us;
  };
  using EngineFactory = std::function<std::unique_ptr<InstanceEngine>(const InstanceHardware& hardware)>;

  // Each instance's step timer delivers {step_event, id} to `steps`; `fresh_engine` makes
  // an instance's empty engine (when added, and when its KV cache is flushed).
  InstanceFleet(engine::Simulation& sim, const LlmClusterConfig& config, engine::EventHandler& steps,
                std::uint64_t step_event, EngineFactory fresh_engine);

  // Instances ever added (removed ones included): the id add() gives next.
  std::uint32_t size() const { return static_cast<std::uint32_t>(instances_.size()); }
  ServingInstance& at(std::uint32_t id) { return *instances_[id]; }
  const ServingInstance& at(std::uint32_t id) const { return *instances_[id]; }
  // The instance, which must exist (not removed): else a logic_error naming `call`.
  ServingInstance& existing(std::uint32_t id, const char* call);
  const Counts& counts() const { return counts_; }
  const Levels& levels() const { return levels_; }
  // The pools' hardware: what prices their iterations, their SKU, TP degree and KV capacity.
  const ServingHardware& hardware() const { return hardware_; }
  // The servers instances run on: the placements add and remove them.
  ServerPool& servers() { return servers_; }
  const ServerPool& servers() const { return servers_; }
  // The pools' instances by state, arrivals and INACTIVE instances, in O(1).
  const PoolLedger& pools() const { return pools_; }
  // A request of `tokens` (prompt and output) came to the pool of `tag`.
  void arrived(InstanceTag tag, std::uint64_t tokens) { pools_.arrived(tag, tokens); }
  PoolRouter& router(InstanceTag tag) { return tag == InstanceTag::kToken ? token_router_ : prompt_router_; }
  const PoolRouter& router(InstanceTag tag) const { return tag == InstanceTag::kToken ? token_router_ : prompt_router_; }

  // A new STARTING instance on `server`, which must be of its pool's hardware and have
  // room for it.
  std::uint32_t add(InstanceTag tag, std::uint32_t server);
  // STARTING -> ACTIVE: routed to from now.
  void activate(std::uint32_t id);
  // ACTIVE -> DRAINING. Refused when it would leave no ACTIVE instance to route a pool's
  // requests to (the prompt pool always; the token pool while prompt instances exist).
  Status drain(std::uint32_t id);
  // DRAINING with nothing assigned: ready for deactivate().
  bool drained(std::uint32_t id) const;
  // Each DRAINING instance that becomes drained is reported to `listener` once, at that
  // moment (the ScalingManager's drain checks then read only those, never walking every
  // draining instance).
  void set_drained_listener(std::function<void(std::uint32_t)> listener) { drained_listener_ = std::move(listener); }
  // Reports the instance to the drained listener if it has just become drained.
  void report_if_drained(std::uint32_t id);
  // Drained DRAINING -> INACTIVE: the KV cache is flushed and the instance leaves its
  // server (returned: the caller releases it when idle).
  std::uint32_t deactivate(std::uint32_t id);
  // Drained DRAINING -> ACTIVE in the other of the prompt and token pools, on the same
  // server (seed 004's migration): the KV cache is flushed; no weights load, since both
  // roles run the same model, so it is routed to at once. Both pools must run on the same
  // hardware.
  void retag(std::uint32_t id, InstanceTag tag);
  // INACTIVE -> STARTING on `server` (reactivation passes through STARTING again).
  void restart(std::uint32_t id, std::uint32_t server);
  // INACTIVE or STARTING -> removed; a STARTING one leaves its server (returned).
  std::optional<std::uint32_t> remove(std::uint32_t id);

  // After every change of an instance's loads: its router follows, the pools' ACTIVE
  // loads when tracked, and a DRAINING instance that became drained is reported.
  void refresh_load(std::uint32_t id);
  // The requests assigned to a pool's ACTIVE instances (running or waiting) and their
  // pending prompt tokens: O(1) once track_active_loads() is on, else a walk over them.
  ActiveLoad active_load(InstanceTag tag) const;
  // Keeps the pools' ACTIVE loads up to date as they change, for O(1) scaling decisions
  // (the ScalingManager turns it on). Off by default: at 400 instances the updates cost a
  // serving-only replay a quarter of its speed.
  void track_active_loads();
  // The ACTIVE instance of `tag` a scale-down takes: prompt and mixed by fewest pending
  // prompt tokens, token by least KV memory held or promised to its requests; ties to the
  // lowest id. None when the pool has no ACTIVE instance. O(log n) for each instance whose
  // load changed since the last call (their index entries catch up), then O(1).
  std::optional<std::uint32_t> least_loaded(InstanceTag tag) const;

  // O(1): the state of an instance that exists (none when removed or never added), and
  // the tag of one ever added.
  std::optional<InstanceState> state_of(std::uint32_t id) const;
  InstanceTag tag_of(std::uint32_t id) const;
  // An existing instance as the scaling side sees it (walks the running segment for its
  // KV use); all of them, by id.
  std::optional<InstanceView> view(std::uint32_t id) const;
  std::vector<InstanceView> views() const;

  // Reports instances and their states to `sink` from now on (nullptr: stop), starting
  // with those that exist.
  void set_activity_sink(ActivitySink* sink);
  // The books agree with the instances (pool totals and routers hold exactly the ACTIVE
  // ones, server loads, counts, no work on an INACTIVE or STARTING instance, drained
  // reports); empty when all is well. O(instances).
  std::vector<std::string> check_invariants() const;

 private:
  void set_state(std::uint32_t id, InstanceState state);
  void attach(ServingInstance& in, std::uint32_t server);
  std::uint32_t detach(ServingInstance& in);
  void account_levels();
  void count_active_load(ServingInstance& in) {
    pools_.recount(in.tag, in.counted, ActiveLoad{in.requests, in.pending_tokens});
  }

  engine::Simulation& sim_;
  engine::EventHandler& steps_;
  std::uint64_t step_event_;
  EngineFactory fresh_engine_;
  ServingHardware hardware_;
  ServerPool servers_;
  // By id, never freed (a removed one keeps its timer, which stale events in the queue
  // still point to); `removed` marks the gone.
  std::vector<std::unique_ptr<ServingInstance>> instances_;
  Counts counts_;
  Levels levels_;
  PoolRouter prompt_router_;  // ACTIVE prompt and mixed instances
  PoolRouter token_router_;   // ACTIVE token instances
  // ACTIVE instances of each tag by scale_down_load(), so that least_loaded needs no scan
  // of the pool (draining 20,000 instances one by one took 3.7 s). Loads that changed since
  // the last least_loaded are marked stale and brought up to date by it: O(log n) per
  // instance that changed, nothing per request event but the mark.
  mutable std::array<LoadIndex, 3> scale_down_;
  mutable std::vector<std::uint8_t> scale_down_stale_;  // by id
  mutable std::vector<std::uint32_t> stale_ids_;
  PoolLedger pools_;
  ActivitySink* activity_ = nullptr;
  std::function<void(std::uint32_t)> drained_listener_;
};

}  // namespace meshsim::cluster
