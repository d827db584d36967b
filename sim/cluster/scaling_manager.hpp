#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster/instance_placement.hpp"
#include "sim/cluster/scaling_options.hpp"
#include "sim/cluster/scaling_view.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/timer.hpp"

namespace meshsim::cluster {

class LlmCluster;

// The actuator of seed 004 over an elastic cluster (or a placement's nodes). scale_up_full places a STARTING
// instance on a server with room for it, or creates a server (one instance per server
// when an instance fills one, as in the seed; smaller ones are packed, so no half-empty
// server is paid for); it becomes ACTIVE after scale_up_delay (and after any wait for its
// room, see PlacedInstance). scale_down_full drains an
// instance and removes it at the first drain check (every drain_check_interval, as the
// seed polls) after the cluster reported it empty and idle, then its server when idle:
// a check reads only the instances reported since the last, never every draining one. Instances get the start state's configuration (the cluster has one
// model, parallelism and SKU). Limits are enforced here: an action that would break
// min_instances_per_pool, max_total_instances or max_servers is refused and logged as
// blocked, never an error. Draining never blocks the simulation: every step is an event.
class ScalingManager final : private engine::EventHandler {
 public:
  using LogSink = std::function<void(std::string_view line)>;

  // Without a placement, instances go on seed 004's elastic servers (ElasticServers,
  // capped by config.max_servers).
  ScalingManager(engine::Simulation& sim, LlmCluster& cluster, ScalingConfig config,
                 InstancePlacement* placement = nullptr);
  ~ScalingManager();
  ScalingManager(const ScalingManager&) = delete;
  ScalingManager& operator=(const ScalingManager&) = delete;

  const ScalingConfig& config() const { return config_; }
  // For drains begun from now on (seed 003 sets it with its ElasticConfig).
  void set_drain_timeout(std::optional<SimTime> timeout) { config_.drain_timeout = timeout; }
  // Log lines in the seed's shape ("[ScalingManager] Instance 3 draining started at
  // 250.00"); off unless set.
  void set_log(LogSink log) { log_ = std::move(log); }

  struct ScaleUp {
    std::uint32_t server = 0;
    std::uint32_t instance = 0;
  };
  // Adds a STARTING instance of `tag` (and a server if none has room). Error (blocked): a limit.
  Expected<ScaleUp> scale_up_full(InstanceTag tag);
  // Drains ACTIVE `instance`; removes it, then its server if idle, once drained. Error
  // (blocked): the pool would fall below min_instances_per_pool, or it is not ACTIVE.
  Status scale_down_full(std::uint32_t instance);
  // scale_down_full(view().least_loaded(tag)): prompt and mixed by fewest pending prompt
  // tokens, token by least KV memory held or promised.
  Status scale_down(InstanceTag tag);

  // Seed 004's migration: drains ACTIVE `instance` and, once drained, re-tags it `to` on
  // its server (LlmCluster::retag: ACTIVE at once, no new server, no scale-up delay).
  // Only between the prompt and token pools. Error (blocked): the instance is not ACTIVE,
  // is mixed or already `to`, or its pool would fall below min_instances_per_pool.
  Status migrate(std::uint32_t instance, InstanceTag to);
  // migrate(least_loaded(from), to).
  Status migrate_pool(InstanceTag from, InstanceTag to);

  // Takes back a scale-up still STARTING: the instance and its server go at once.
  Status cancel_scale_up(std::uint32_t instance);

  // Seed 003's worker moves: drain to INACTIVE (the instance keeps its id; its server is
  // released like scale_down_full's), and reactivate an INACTIVE one through STARTING on
  // a new server.
  Status deactivate(std::uint32_t instance);
  Status reactivate(std::uint32_t instance);

  // What the scaling side may read: pools, instances, STARTING ones, counts and status.
  ScalingView view() const { return ScalingView(cluster_, *this); }

 private:
  friend class ScalingView;  // reads sim_'s clock, starting_ and counts_

  enum EventKind : std::uint64_t { kActivate, kDrainCheck, kEvacuate };
  // What becomes of a drained instance: removed (scale_down_full), kept INACTIVE
  // (deactivate) or re-tagged into the other pool (migrate).
  enum class AfterDrain { kRemove, kDeactivate, kRetag };
  struct Draining {
    SimTime since;
    AfterDrain after = AfterDrain::kRemove;
    InstanceTag retag_to = InstanceTag::kMixed;  // kRetag's pool
    std::uint32_t serial = 0;  // which drain: a timeout left from an earlier one is ignored
  };
  void on_event(const engine::EventPayload& payload) override;
  Status begin_drain(std::uint32_t instance, AfterDrain after, InstanceTag retag_to = InstanceTag::kMixed);
  Status room_for_one_more(InstanceTag tag);
  // The placement's choice; elastic: room on an existing server (lowest id first), else
  // a new server.
  Expected<PlacedInstance> take_server(std::uint32_t instance, InstanceTag tag);
  // The instance, STARTING on its server, becomes ACTIVE after the wait and scale_up_delay.
  void arm_activation(std::uint32_t instance, InstanceTag tag, SimTime wait_for_room);
  // The placement's release, counting and logging a server that went with the instance.
  void release(std::uint32_t instance, std::uint32_t server);
  void check_draining();
  Error blocked(std::string why);
  void log(const std::string& line) const;
  std::string at_now() const;

  engine::Simulation& sim_;
  LlmCluster& cluster_;
  ScalingConfig config_;
  std::unique_ptr<ElasticServers> elastic_;  // the placement when none was given
  InstancePlacement* placement_;
  LogSink log_;
  std::map<std::uint32_t, Draining> draining_;  // by instance id
  // Instances the cluster reported drained since the last drain check (its drained
  // listener): a check reads these alone, so it costs O(drained), not O(draining).
  std::set<std::uint32_t> drained_;
  std::uint32_t drain_serials_ = 0;
  // STARTING instances by tag, with when each becomes ACTIVE.
  std::array<std::map<std::uint32_t, SimTime>, 3> starting_;
  engine::Timer drain_check_;
  ScalingCounts counts_;
};

}  // namespace meshsim::cluster
