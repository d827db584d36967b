#include "sim/autoscale/autoscaler.hpp"

#include <algorithm>

namespace meshsim::autoscale {

PoolSnapshot snapshot(const ScalingManager& manager, InstanceTag tag) {
  PoolSnapshot pool;
  pool.tag = tag;
  const std::uint64_t capacity = manager.cluster().kv_capacity_tokens();
  for (const auto& view : manager.cluster().instance_views()) {
    if (view.tag != tag) continue;
    switch (view.state) {
      case InstanceState::kStarting: ++pool.starting; break;
      case InstanceState::kDraining: ++pool.draining; break;
      case InstanceState::kInactive: ++pool.inactive; break;
      case InstanceState::kActive:
        ++pool.active;
        pool.active_requests += static_cast<std::uint64_t>(view.requests);
        pool.pending_requests += static_cast<std::uint64_t>(view.requests) - view.running;
        pool.kv_used += view.kv_used;
        pool.kv_capacity += capacity;
        pool.pending_tokens += view.pending_tokens;
        break;
    }
  }
  return pool;
}

std::vector<InstanceTag> pools_of(const ScalingManager& manager) {
  std::vector<InstanceTag> tags;
  for (const auto& group : manager.cluster().config().start_state) {
    if (std::find(tags.begin(), tags.end(), group.tag) == tags.end()) tags.push_back(group.tag);
  }
  return tags;
}

void scale_pool_to(ScalingManager& manager, InstanceTag tag, std::uint32_t desired) {
  const PoolSnapshot pool = snapshot(manager, tag);
  std::uint32_t current = pool.current();
  for (; current < desired; ++current) {
    if (!manager.scale_up_full(tag)) return;
  }
  if (current <= desired) return;
  // Newest STARTING first: they serve nothing yet.
  auto views = manager.cluster().instance_views();
  for (auto it = views.rbegin(); it != views.rend() && current > desired; ++it) {
    if (it->tag == tag && it->state == InstanceState::kStarting && manager.cancel_scale_up(it->id)) --current;
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
  if (!running_()) return;
  ++decisions_;
  policy_.decide(manager_);
  timer_.arm_after(policy_.interval());
}

}  // namespace meshsim::autoscale
