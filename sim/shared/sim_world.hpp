#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/shared/sim_timers.hpp"
#include "scheduler/task.hpp"
#include "scheduler/world.hpp"
#include "sim/engine/simulation.hpp"

namespace meshsim::shared {

using scheduler::CancelReply;
using engine::SimTime;

// The scheduling core on a simulation's clock: now() is the simulation's time, timers
// are engine events (FIFO among equal times, so a hold expiring at the same microsecond
// as another event runs in the order it was armed), and agents are simulated processes
// whose owner says how each answers a cancel.
//
// A cancel is two-phase, on the simulated clock: asked now, it completes when the agent
// answers or, for a hung agent, at cancel_timeout when it is killed. The core hands the
// victim's room to its preemptor at once (nothing else can take it) and tells it when
// the victim will have stopped (SubmitResult::ready_in); the agents' owner hears of the
// stop then. Room the preemptor does not need is free from the ask, not from the stop.
class SimWorld final : public scheduler::Clock,
                       public scheduler::TimerService,
                       public scheduler::Actuator,
                       private scheduler::TimerTarget {
 public:
  explicit SimWorld(engine::Simulation& sim) : sim_(sim), timers_(sim) {}
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  SimTime now() const override { return sim_.now(); }
  TimerId call_at(SimTime at, scheduler::TimerTarget& target, std::uint64_t tag) override {
    return timers_.call_at(at, target, tag);
  }
  void cancel(TimerId id) override { timers_.cancel(id); }
  CancelReply cancel_task(const scheduler::Task& task, SimTime timeout) override;

  // Who runs the simulated agents. Both are called from inside a core call (stopped too,
  // when the agent stops at once), so they may only record and schedule, never call back
  // into the core. Tasks are the core's ids: a preempted task keeps its id while the core
  // holds it, so `stopped` names the task `answer_in` was asked about.
  class Agents {
   public:
    // How long until the agent running `task` answers its cancel; nullopt: never (it hangs).
    virtual std::optional<SimTime> answer_in(const scheduler::Task& task) = 0;
    // The agent stopped `task`: it answered (true), or was killed at cancel_timeout (false).
    virtual void stopped(scheduler::TaskId task, bool answered) = 0;

   protected:
    ~Agents() = default;
  };
  // Without agents, every agent answers at once and nobody hears of the stop. `agents`
  // must outlive the world or be replaced.
  void set_agents(Agents* agents) { agents_ = agents; }

  std::uint64_t cancels_asked() const { return cancels_; }
  std::size_t armed_timers() const { return timers_.armed(); }

 private:
  // A stop that lies ahead, in a slot reused once it has been told.
  struct PendingStop {
    scheduler::TaskId task = scheduler::kNoTask;
    bool answered = false;
  };
  void on_timer(std::uint64_t slot) override;

  engine::Simulation& sim_;
  SimTimers timers_;
  std::uint64_t cancels_ = 0;
  Agents* agents_ = nullptr;
  std::vector<PendingStop> stops_;
  std::vector<std::uint64_t> free_stops_;
};

}  // namespace meshsim::shared
