#pragma once
// What the scaling side may read of a cluster under a ScalingManager, and nothing it could
// change: the pools' counts and loads, the instances as it sees them, the manager's
// STARTING instances, counts and status. Autoscalers, the RL environment and its
// observation read through it and act through the manager alone.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/cluster/instance_view.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

class InstanceFleet;
class LlmCluster;
class ScalingManager;
struct InstanceHardware;

// get_status_summary() (seed 004's keys).
struct ScalingStatus {
  std::uint32_t active_instances = 0;
  std::uint32_t scaling_up_instances = 0;  // STARTING
  std::uint32_t draining_instances = 0;
  std::uint32_t total_servers = 0;
  std::uint32_t total_instances = 0;
  bool operator==(const ScalingStatus&) const = default;
};

// What the manager did, for summaries and the RL reward's churn term.
struct ScalingCounts {
  std::uint64_t scale_ups = 0, scale_downs = 0, blocked = 0;
  std::uint64_t instances_removed = 0, servers_removed = 0, evacuations = 0;
  std::uint64_t migrations = 0;  // instances moved between the prompt and token pools
};

// One pool (the instances of one tag) as an autoscaler sees it at a decision: counts by
// state in O(1), loads summed over its ACTIVE instances. Only fold-invariant quantities:
// a decision is the same whether decode runs are folded.
struct PoolSnapshot {
  InstanceTag tag = InstanceTag::kMixed;
  std::uint32_t active = 0, starting = 0, draining = 0, inactive = 0;
  std::uint64_t active_requests = 0;  // assigned to ACTIVE instances, running or waiting
  std::int64_t pending_tokens = 0;    // on ACTIVE instances
  // Requests (and their prompt + output tokens) that came to the pool since the run began.
  std::uint64_t arrived_requests = 0, arrived_tokens = 0;
  // Instances counted as the pool's size (Kubernetes' "current replicas").
  std::uint32_t current() const { return active + starting; }
};

// What costs a walk over the pool's instances, O(n): requests waiting (not in the running
// batch) and KV tokens held on its ACTIVE instances, and the KV they can hold.
struct PoolKv {
  std::uint64_t pending_requests = 0, kv_used = 0, kv_capacity = 0;
};

// A read-only window on a ScalingManager and its cluster (two references: copy it freely,
// but not past the manager's life).
class ScalingView {
 public:
  ScalingView(const LlmCluster& cluster, const ScalingManager& manager) : cluster_(cluster), manager_(manager) {}

  engine::SimTime now() const;
  PoolSnapshot snapshot(InstanceTag tag) const;  // O(1)
  PoolKv scan_active(InstanceTag tag) const;     // O(instances)
  // Instances of `tag` in `state`, O(1).
  std::uint32_t count(InstanceTag tag, InstanceState state) const;
  // The pool's hardware: the model and SKU it serves, its TP degree, KV capacity, step prices.
  const InstanceHardware& hardware(InstanceTag tag) const;
  // How instances batch (one setting for all pools: max_batch_size and the rest).
  const BatchingConfig& batching() const;
  // The ACTIVE instance of `tag` a scale-down takes (InstanceFleet::least_loaded).
  std::optional<std::uint32_t> least_loaded(InstanceTag tag) const;
  // The lowest INACTIVE instance of `tag` (the one a reactivation takes).
  std::optional<std::uint32_t> first_inactive(InstanceTag tag) const;
  // The most recent scale-up of `tag` still STARTING, if any.
  std::optional<std::uint32_t> newest_starting(InstanceTag tag) const;
  // STARTING instances of `tag` that become ACTIVE at or before `when`.
  std::uint32_t starting_ready_by(InstanceTag tag, engine::SimTime when) const;
  // An existing instance (none when removed or never added).
  std::optional<InstanceView> instance(std::uint32_t id) const;
  std::vector<InstanceView> get_active_instances(std::optional<InstanceTag> tag = std::nullopt) const;
  ScalingStatus get_status_summary() const;
  const ScalingCounts& counts() const;

 private:
  const InstanceFleet& fleet() const;

  const LlmCluster& cluster_;
  const ScalingManager& manager_;
};

}  // namespace meshsim::cluster
