#include "sim/autoscale/autoscaler.hpp"

#include <algorithm>

namespace meshsim::autoscale {

PoolSnapshot snapshot(const ScalingManager& manager, InstanceTag tag) {
  const auto& totals = manager.cluster().fleet().pools().totals(tag);
  PoolSnapshot pool;
  pool.tag = tag;
  pool.active = totals.count(InstanceState::kActive);
  pool.starting = totals.count(InstanceState::kStarting);
  pool.draining = totals.count(InstanceState::kDraining);
  pool.inactive = totals.count(InstanceState::kInactive);
  pool.arrived_requests = totals.arrived_requests;
  pool.arrived_tokens = totals.arrived_tokens;
  const auto load = manager.cluster().fleet().active_load(tag);
  pool.active_requests = static_cast<std::uint64_t>(load.requests);
  pool.pending_tokens = load.pending_tokens;
  return pool;
}

PoolKv scan_active(const ScalingManager& manager, InstanceTag tag) {
  PoolKv pool;
  for (const auto& view : manager.cluster().fleet().views()) {
    if (view.tag != tag || view.state != InstanceState::kActive) continue;
    pool.pending_requests += static_cast<std::uint64_t>(view.requests) - view.running;
    pool.kv_used += view.kv_used;
    pool.kv_capacity += manager.cluster().fleet().hardware().of(tag).kv_capacity_tokens;
  }
  return pool;
}

void scale_pool_to(ScalingManager& manager, InstanceTag tag, std::uint32_t desired) {
  const PoolSnapshot pool = snapshot(manager, tag);
  std::uint32_t current = pool.current();
  for (; current < desired; ++current) {
    if (!manager.scale_up_full(tag)) return;
  }
  if (current <= desired) return;
  // Newest STARTING first: they serve nothing yet.
  while (current > desired) {
    const auto starting = manager.newest_starting(tag);
    if (!starting || !manager.cancel_scale_up(*starting)) break;
    --current;
  }
  for (; current > desired; --current) {
    if (!manager.scale_down(tag)) return;
  }
}

AutoscalerLoop::AutoscalerLoop(engine::Simulation& sim, ScalingManager& manager, Autoscaler& policy,
                               std::function<bool()> running)
    : manager_(manager), policy_(policy), running_(std::move(running)), timer_(sim, *this) {}

void AutoscalerLoop::start() { timer_.arm_after(SimTime::zero()); }

void AutoscalerLoop::on_event(const engine::EventPayload& /*payload*/) {
  if (stopped_ || !running_()) return;
  ++decisions_;
  policy_.decide(manager_);
  timer_.arm_after(policy_.interval());
}

}  // namespace meshsim::autoscale
