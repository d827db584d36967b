#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace meshsim::scheduler {

// The scheduling core sees time and the outside world only through these interfaces, so
// the same core runs against the simulator, a fake in unit tests, or (one day) a real
// cluster. Times are seconds, as in the seeds' API.

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an origin the owner chooses; never decreases while a run goes on.
  virtual double now() const = 0;
};

using TimerId = std::uint64_t;

// One-shot timers (the core uses them for deadlines such as a preemptor's capacity hold).
class TimerService {
 public:
  virtual ~TimerService() = default;
  virtual TimerId call_after(double seconds, std::function<void()> callback) = 0;
  // Cancelling a timer that fired or was cancelled already does nothing.
  virtual void cancel(TimerId id) = 0;
};

// What an agent answered when asked to cancel a task.
struct CancelReply {
  bool answered = true;   // false: no answer within the timeout (the agent is force-killed)
  double waited_s = 0.0;  // how long the agent took to stop, at most the timeout
  // Where that wait is: false, it passed inside the call (ManualWorld moves its clock);
  // true, it lies ahead on a simulated clock (SimWorld: the agent stops waited_s from now).
  bool wait_ahead = false;
};

// Acts on the agents (the Ray actors of the seeds).
class Actuator {
 public:
  virtual ~Actuator() = default;
  // Asks `agent` to stop `task_id`, waiting at most `timeout_s` (in the call, or ahead
  // on the clock: see CancelReply::wait_ahead).
  virtual CancelReply cancel_task(const std::string& agent, const std::string& task_id, double timeout_s) = 0;
};

}  // namespace meshsim::scheduler
