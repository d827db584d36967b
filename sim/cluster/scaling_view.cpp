#include "sim/cluster/scaling_view.hpp"

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/scaling_manager.hpp"

namespace meshsim::cluster {

const InstanceFleet& ScalingView::fleet() const { return cluster_.fleet(); }

engine::SimTime ScalingView::now() const { return manager_.sim_.now(); }

PoolSnapshot ScalingView::snapshot(InstanceTag tag) const {
  const auto& totals = fleet().pools().totals(tag);
  PoolSnapshot pool;
  pool.tag = tag;
  pool.active = totals.count(InstanceState::kActive);
  pool.starting = totals.count(InstanceState::kStarting);
  pool.draining = totals.count(InstanceState::kDraining);
  pool.inactive = totals.count(InstanceState::kInactive);
  pool.arrived_requests = totals.arrived_requests;
  pool.arrived_tokens = totals.arrived_tokens;
  const auto load = fleet().active_load(tag);
  pool.active_requests = static_cast<std::uint64_t>(load.requests);
  pool.pending_tokens = load.pending_tokens;
  return pool;
}

PoolKv ScalingView::scan_active(InstanceTag tag) const {
  PoolKv pool;
  for (const auto& view : fleet().views()) {
    if (view.tag != tag || view.state != InstanceState::kActive) continue;
    pool.pending_requests += static_cast<std::uint64_t>(view.requests) - view.running;
    pool.kv_used += view.kv_used;
    pool.kv_capacity += fleet().hardware().of(tag).kv_capacity_tokens;
  }
  return pool;
}

std::uint32_t ScalingView::count(InstanceTag tag, InstanceState state) const {
  return fleet().pools().totals(tag).count(state);
}

const BatchingConfig& ScalingView::batching() const { return cluster_.config().batching; }

const InstanceHardware& ScalingView::hardware(InstanceTag tag) const { return fleet().hardware().of(tag); }

std::optional<std::uint32_t> ScalingView::least_loaded(InstanceTag tag) const { return fleet().least_loaded(tag); }

std::optional<std::uint32_t> ScalingView::first_inactive(InstanceTag tag) const {
  return fleet().pools().first_inactive(tag);
}

std::optional<std::uint32_t> ScalingView::newest_starting(InstanceTag tag) const {
  const auto& ids = manager_.starting_[static_cast<std::size_t>(tag)];
  if (ids.empty()) return std::nullopt;
  return ids.rbegin()->first;
}

std::uint32_t ScalingView::starting_ready_by(InstanceTag tag, engine::SimTime when) const {
  std::uint32_t ready = 0;
  for (const auto& [instance, ready_at] : manager_.starting_[static_cast<std::size_t>(tag)]) ready += ready_at <= when;
  return ready;
}

std::optional<InstanceView> ScalingView::instance(std::uint32_t id) const { return fleet().view(id); }

std::vector<InstanceView> ScalingView::get_active_instances(std::optional<InstanceTag> tag) const {
  std::vector<InstanceView> active;
  for (const auto& view : fleet().views()) {
    if (view.state == InstanceState::kActive && (!tag || view.tag == *tag)) active.push_back(view);
  }
  return active;
}

ScalingStatus ScalingView::get_status_summary() const {
  const auto counts = cluster_.instance_counts();  // O(1): from the pool totals
  ScalingStatus status;
  status.active_instances = counts.active;
  status.scaling_up_instances = counts.starting;
  status.draining_instances = counts.draining;
  status.total_servers = fleet().servers().count();
  status.total_instances = cluster_.instances();
  return status;
}

const ScalingCounts& ScalingView::counts() const { return manager_.counts_; }

}  // namespace meshsim::cluster
