#pragma once

#include <cstdint>
#include <string>

#include "scheduler/core_time.hpp"

namespace meshsim::scheduler {

// The scheduling core sees time and the outside world only through these interfaces, so
// the same core runs against the simulator, a fake in unit tests, or (one day) a real
// cluster. Time is SimTime (core_time.hpp).

class Clock {
 public:
  virtual ~Clock() = default;
  // Time since an origin the owner chooses; never decreases while a run goes on.
  virtual SimTime now() const = 0;
};

using TimerId = std::uint64_t;

// What a timer calls when it fires: the object that armed it, told which of its timers
// it is by the tag it chose. No callable is allocated per timer.
class TimerTarget {
 public:
  virtual void on_timer(std::uint64_t tag) = 0;

 protected:
  ~TimerTarget() = default;
};

// One-shot timers (the core uses them for deadlines such as a preemptor's capacity hold).
class TimerService {
 public:
  virtual ~TimerService() = default;
  // Calls target.on_timer(tag) at `at` (as soon as timers run again when `at` has
  // passed). The target must outlive the timer or cancel it.
  virtual TimerId call_at(SimTime at, TimerTarget& target, std::uint64_t tag) = 0;
  // Cancelling a timer that fired or was cancelled already does nothing.
  virtual void cancel(TimerId id) = 0;
};

// What an agent answered when asked to cancel a task.
struct CancelReply {
  bool answered = true;              // false: no answer within the timeout (the agent is force-killed)
  SimTime waited = SimTime::zero();  // how long the agent took to stop, at most the timeout
  // Where that wait is: false, it passed inside the call (ManualWorld moves its clock);
  // true, it lies ahead on a simulated clock (SimWorld: the agent stops `waited` from now).
  bool wait_ahead = false;
};

struct Task;  // task.hpp

// Acts on the agents (the Ray actors of the seeds).
class Actuator {
 public:
  virtual ~Actuator() = default;
  // Asks the agent running `task` (task.agent, task.agent_id) to stop it, waiting at
  // most `timeout` (in the call, or ahead on the clock: see CancelReply::wait_ahead).
  // The task is still running when asked; its id (task.handle) stays its own while the
  // core holds the preempted task.
  virtual CancelReply cancel_task(const Task& task, SimTime timeout) = 0;
};

}  // namespace meshsim::scheduler
