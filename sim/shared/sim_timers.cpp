#include "sim/shared/sim_timers.hpp"

#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::shared {

TimerId SimTimers::call_after(double seconds, std::function<void()> callback) {
  MESHSIM_CHECK(seconds >= 0 && seconds <= engine::SimTime::kMaxSeconds, "call_after: a delay out of range");
  const TimerId id = next_timer_++;
  callbacks_.emplace(id, std::move(callback));
  sim_.schedule_after(engine::SimTime::from_seconds_up(seconds), *this, engine::EventPayload{id, 0});
  return id;
}

void SimTimers::release() {
  holding_ = false;
  for (const TimerId id : std::exchange(held_, {})) fire(id);
}

void SimTimers::on_event(const engine::EventPayload& payload) {
  if (holding_) {
    held_.push_back(payload.a);
  } else {
    fire(payload.a);
  }
}

void SimTimers::fire(TimerId id) {
  const auto it = callbacks_.find(id);
  if (it == callbacks_.end()) return;  // cancelled
  auto callback = std::move(it->second);
  callbacks_.erase(it);
  callback();
}

}  // namespace meshsim::shared
