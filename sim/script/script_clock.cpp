#include "sim/script/script_clock.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "scheduler/task.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::script {

using engine::SimTime;

Status ScriptClock::advance(double seconds) {
  const auto delay = SimTime::from_seconds_checked(seconds);
  // Both the visible clock and the simulation's stay within the limit (a rewind moves
  // one against the other).
  if (!delay || *delay < SimTime::zero() || std::max(now_s(), sim_.now().seconds()) + seconds > SimTime::kMaxSeconds) {
    return Error{"advance: " + std::to_string(seconds) + " s from " + std::to_string(now_s()) +
                 " s passes the simulated clock's limit of " + std::to_string(SimTime::kMaxSeconds) + " s"};
  }
  // Timers a hung agent's wait overtook fire first, now: the clock never goes back.
  timers_.release();
  sim_.run_until(sim_.now() + *delay);
  return Ok();
}

void ScriptClock::rewind(SimTime to) {
  timers_.clear();
  offset_us_ = to.us() - sim_.now().us();
}

scheduler::CancelReply ScriptClock::cancel_task(const scheduler::Task& task, SimTime timeout) {
  if (hanging.count(task.agent) == 0) return scheduler::CancelReply{true, SimTime::zero()};
  // The core's timers only release holds, which never cancel a task: a wait always starts
  // from a script's call, never from inside the simulation's run.
  MESHSIM_CHECK(sim_.state() != engine::RunState::kRunning, "a hung agent's wait from inside an event");
  timers_.hold();  // released by the next advance
  sim_.run_until(sim_.now() + timeout);
  return scheduler::CancelReply{false, timeout};
}

}  // namespace meshsim::script
