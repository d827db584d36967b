#include "sim/script/script_clock.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::script {

using engine::SimTime;

// Divided, not multiplied by 1e-6: the double nearest the microsecond count, so a script
// that advances 9.999 s reads 9.999 (not 9.998999999999999).
double ScriptClock::now() const { return static_cast<double>(sim_.now().us() + offset_us_) / 1e6; }

Status ScriptClock::advance(double seconds) {
  const auto delay = SimTime::from_seconds_checked(seconds);
  // Both the visible clock and the simulation's stay within the limit (a rewind moves
  // one against the other).
  if (!delay || *delay < SimTime::zero() || std::max(now(), sim_.now().seconds()) + seconds > SimTime::kMaxSeconds) {
    return Error{"advance: " + std::to_string(seconds) + " s from " + std::to_string(now()) +
                 " s passes the simulated clock's limit of " + std::to_string(SimTime::kMaxSeconds) + " s"};
  }
  // Timers a hung agent's wait overtook fire first, now: the clock never goes back.
  for (const scheduler::TimerId id : std::exchange(late_, {})) fire(id);
  sim_.run_until(sim_.now() + *delay);
  return Ok();
}

void ScriptClock::rewind(double seconds) {
  timers_.clear();  // their events still in the simulation find nothing to run
  late_.clear();
  offset_us_ = SimTime::from_seconds(seconds).us() - sim_.now().us();
}

scheduler::TimerId ScriptClock::call_after(double seconds, std::function<void()> callback) {
  MESHSIM_CHECK(seconds >= 0 && seconds <= SimTime::kMaxSeconds, "call_after: a delay out of range");
  const scheduler::TimerId id = next_timer_++;
  timers_.emplace(id, std::move(callback));
  sim_.schedule_after(SimTime::from_seconds_up(seconds), *this, engine::EventPayload{id, 0});
  return id;
}

scheduler::CancelReply ScriptClock::cancel_task(const std::string& agent, const std::string&, double timeout_s) {
  if (hanging.count(agent) == 0) return scheduler::CancelReply{true, 0.0};
  // The core's timers only release holds, which never cancel a task: a wait always starts
  // from a script's call, never from inside the simulation's run.
  MESHSIM_CHECK(sim_.state() != engine::RunState::kRunning, "a hung agent's wait from inside an event");
  in_core_call_ = true;
  sim_.run_until(sim_.now() + SimTime::from_seconds_up(timeout_s));
  in_core_call_ = false;
  return scheduler::CancelReply{false, timeout_s};
}

void ScriptClock::on_event(const engine::EventPayload& payload) {
  if (in_core_call_) {
    late_.push_back(payload.a);
  } else {
    fire(payload.a);
  }
}

void ScriptClock::fire(scheduler::TimerId id) {
  const auto it = timers_.find(id);
  if (it == timers_.end()) return;  // cancelled
  auto callback = std::move(it->second);
  timers_.erase(it);
  callback();
}

}  // namespace meshsim::script
