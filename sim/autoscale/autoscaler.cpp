#include "sim/autoscale/autoscaler.hpp"

#include <algorithm>

namespace meshsim::autoscale {

void scale_pool_to(ScalingManager& manager, InstanceTag tag, std::uint32_t desired) {
  const PoolSnapshot pool = manager.view().snapshot(tag);
  std::uint32_t current = pool.current();
  for (; current < desired; ++current) {
    if (!manager.scale_up_full(tag)) return;
  }
  if (current <= desired) return;
  // Newest STARTING first: they serve nothing yet.
  while (current > desired) {
    const auto starting = manager.view().newest_starting(tag);
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
