#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "scheduler/world.hpp"
#include "sim/engine/simulation.hpp"

namespace meshsim::shared {

using scheduler::TimerId;
using scheduler::TimerTarget;

// The core's one-shot timers as a simulation's events, for the worlds that put the core
// on a simulated clock (SimWorld; sim/script's ScriptClock). A timer fires at its time
// (now, when that has passed), FIFO among equal times. While held, the timers that fall
// due wait, in order, until release() fires them: a world mid-way through a core call (a
// hung agent's wait) must not call back into the core.
class SimTimers final : private engine::EventHandler {
 public:
  explicit SimTimers(engine::Simulation& sim) : sim_(sim) {}
  SimTimers(const SimTimers&) = delete;
  SimTimers& operator=(const SimTimers&) = delete;

  TimerId call_at(engine::SimTime at, TimerTarget& target, std::uint64_t tag);
  // Cancelling a timer that fired or was cancelled already does nothing.
  void cancel(TimerId id) { armed_.erase(id); }
  // Drops every armed timer (their events still in the simulation find nothing to run).
  void clear() {
    armed_.clear();
    held_.clear();
  }
  void hold() { holding_ = true; }
  // Stops holding and fires what fell due meanwhile, in order (cancelled ones excepted).
  void release();
  std::size_t armed() const { return armed_.size(); }

 private:
  struct Armed {
    TimerTarget* target;
    std::uint64_t tag;
  };
  void on_event(const engine::EventPayload& payload) override;
  void fire(TimerId id);

  engine::Simulation& sim_;
  std::unordered_map<TimerId, Armed> armed_;  // not fired, not cancelled
  std::vector<TimerId> held_;                 // fell due while held
  bool holding_ = false;
  TimerId next_timer_ = 1;
};

}  // namespace meshsim::shared
