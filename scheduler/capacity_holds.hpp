#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "scheduler/agent_manager.hpp"
#include "scheduler/world.hpp"

namespace meshsim::scheduler {

// Idle agents kept for a named preemptor (execute_preemption's hold_for) until the
// policy's hold_timeout: one timer per hold. Each hold gets a serial, so a timer whose
// hold has ended or been armed again does nothing. Without a TimerService holds never
// lapse.
class CapacityHolds {
 public:
  // `lapsed` runs when a hold times out, after the agent is no longer held.
  CapacityHolds(const Clock& clock, TimerService* timers, AgentManager& agents, std::function<void(Agent&)> lapsed)
      : clock_(clock), timers_(timers), agents_(agents), lapsed_(std::move(lapsed)) {}
  // Pending timers call back into this object (and `lapsed` into its owner): it stays put.
  CapacityHolds(const CapacityHolds&) = delete;
  CapacityHolds& operator=(const CapacityHolds&) = delete;

  // Holds `agent` (its held_for already set) until `until` (seconds).
  void arm(Agent& agent, double until);
  // The hold ends now (its task starts, or the agent goes): no longer held, its timer
  // cancelled.
  void end(Agent& agent);

 private:
  void lapse(const std::string& agent_name, std::uint64_t serial);

  const Clock& clock_;
  TimerService* timers_;
  AgentManager& agents_;
  std::function<void(Agent&)> lapsed_;
  std::uint64_t serial_ = 0;
};

}  // namespace meshsim::scheduler
