#include "scheduler/capacity_holds.hpp"

namespace meshsim::scheduler {

namespace {
constexpr std::uint64_t kSerialBits = 0xffffffffu;
}

void CapacityHolds::arm(Agent& agent, SimTime until) {
  agent.hold_until = until;
  agent.hold_serial = ++serial_;
  if (timers_ == nullptr) return;
  const std::uint64_t tag = (static_cast<std::uint64_t>(agent.id) << 32) | (agent.hold_serial & kSerialBits);
  agent.hold_timer = timers_->call_at(until, *this, tag);
}

void CapacityHolds::end(Agent& agent) {
  agent.held_for.clear();
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  agent.hold_timer = 0;
}

void CapacityHolds::on_timer(std::uint64_t tag) {
  Agent* agent = agents_.agent(static_cast<AgentId>(tag >> 32));
  if (agent == nullptr || (agent->hold_serial & kSerialBits) != (tag & kSerialBits) || agent->held_for.empty()) return;
  agent->held_for.clear();
  agent->hold_timer = 0;
  lapsed_(*agent);
}

}  // namespace meshsim::scheduler
