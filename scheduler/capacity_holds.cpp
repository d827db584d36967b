#include "scheduler/capacity_holds.hpp"

#include <algorithm>

namespace meshsim::scheduler {

void CapacityHolds::arm(Agent& agent, double until) {
  agent.hold_until = until;
  agent.hold_serial = ++serial_;
  if (timers_ == nullptr) return;
  const std::string agent_name = agent.spec.name;
  const std::uint64_t serial = agent.hold_serial;
  agent.hold_timer = timers_->call_after(std::max(0.0, until - clock_.now()),
                                         [this, agent_name, serial] { lapse(agent_name, serial); });
}

void CapacityHolds::end(Agent& agent) {
  agent.held_for.clear();
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  agent.hold_timer = 0;
}

void CapacityHolds::lapse(const std::string& agent_name, std::uint64_t serial) {
  Agent* agent = agents_.agent(agent_name);
  if (agent == nullptr || agent->hold_serial != serial || agent->held_for.empty()) return;
  agent->held_for.clear();
  agent->hold_timer = 0;
  lapsed_(*agent);
}

}  // namespace meshsim::scheduler
