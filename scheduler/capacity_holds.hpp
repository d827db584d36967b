#pragma once

#include <cstdint>
#include <functional>

#include "scheduler/agent_manager.hpp"
#include "scheduler/world.hpp"

namespace meshsim::scheduler {

// Idle agents kept for a named preemptor (execute_preemption's hold_for) until the
// policy's hold_timeout: one timer per hold. Each hold gets a serial, so a timer whose
// hold has ended or been armed again does nothing. Without a TimerService holds never
// lapse.
class CapacityHolds final : private TimerTarget {
 public:
  // `lapsed` runs when a hold times out, after the agent is no longer held.
  CapacityHolds(TimerService* timers, AgentManager& agents, std::function<void(Agent&)> lapsed)
      : timers_(timers), agents_(agents), lapsed_(std::move(lapsed)) {}
  // Pending timers call back into this object (and `lapsed` into its owner): it stays put.
  CapacityHolds(const CapacityHolds&) = delete;
  CapacityHolds& operator=(const CapacityHolds&) = delete;

  // Holds `agent` (its held_for already set) until `until`.
  void arm(Agent& agent, SimTime until);
  // The hold ends now (its task starts, or the agent goes): no longer held, its timer
  // cancelled.
  void end(Agent& agent);

 private:
  // The tag is the agent's id (high half) and the low half of its hold's serial.
  void on_timer(std::uint64_t tag) override;

  TimerService* timers_;
  AgentManager& agents_;
  std::function<void(Agent&)> lapsed_;
  std::uint64_t serial_ = 0;
};

}  // namespace meshsim::scheduler
