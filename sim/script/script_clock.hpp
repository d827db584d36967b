#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "sim/shared/sim_timers.hpp"
#include "scheduler/world.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/simulation.hpp"

namespace meshsim::script {

// A scenario script's one clock: the scheduling core's clock, timers and agents on the
// simulation that also runs the script's serving instances, so the core and the serving
// side never disagree on the time (requests submitted after a hung agent's wait arrive
// after it; a serving instance's timers fire in an `advance` with the core's).
//
// Agents answer a cancel at once unless hung. A hung agent's cancel makes the caller wait
// out the timeout inside its call, as the seeds' synchronous cancel does: the simulation
// runs on through the wait (serving instances with it), while the core's own timers that
// fall in it fire late, at the next `advance`, since the core is mid-call.
class ScriptClock final : public scheduler::Clock, public scheduler::TimerService, public scheduler::Actuator {
 public:
  explicit ScriptClock(engine::Simulation& sim) : sim_(sim), timers_(sim) {}
  ScriptClock(const ScriptClock&) = delete;
  ScriptClock& operator=(const ScriptClock&) = delete;

  // The simulation's time, shifted by a state file's rewind.
  engine::SimTime now() const override { return engine::SimTime::from_us(sim_.now().us() + offset_us_); }
  // now() in seconds, for the script's edge (SimTime::seconds: the double nearest the
  // microsecond count, so a script that advances 9.999 s reads 9.999).
  double now_s() const { return now().seconds(); }
  // Moves the clock `seconds` ahead, running what falls due on the way; refused, changing
  // nothing, when that passes the simulated clock's limit.
  Status advance(double seconds);
  // Where load_state puts the clock: `to` (back or ahead), the core's timers of the
  // abandoned timeline dropped (it re-arms its own). Only when nothing else runs on the
  // simulation: serving instances cannot follow the clock back.
  void rewind(engine::SimTime to);

  // `at` on this clock, which the rewind shifted from the simulation's.
  scheduler::TimerId call_at(engine::SimTime at, scheduler::TimerTarget& target, std::uint64_t tag) override {
    return timers_.call_at(at - engine::SimTime::from_us(offset_us_), target, tag);
  }
  void cancel(scheduler::TimerId id) override { timers_.cancel(id); }
  scheduler::CancelReply cancel_task(const scheduler::Task& task, engine::SimTime timeout) override;

  std::set<std::string> hanging;  // agents that never answer

 private:
  engine::Simulation& sim_;
  std::int64_t offset_us_ = 0;  // now() less the simulation's time
  shared::SimTimers timers_;  // held from a hung agent's wait to the next advance
};

}  // namespace meshsim::script
