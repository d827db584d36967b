#include "sim/shared/sim_timers.hpp"

#include <algorithm>
#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::shared {

TimerId SimTimers::call_at(engine::SimTime at, TimerTarget& target, std::uint64_t tag) {
  MESHSIM_CHECK(at <= engine::SimTime::max_representable(), "call_at: a time past the simulated clock's limit");
  const TimerId id = next_timer_++;
  armed_.emplace(id, Armed{&target, tag});
  sim_.schedule_at(std::max(at, sim_.now()), *this, engine::EventPayload{id, 0});
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
  const auto it = armed_.find(id);
  if (it == armed_.end()) return;  // cancelled
  const Armed armed = it->second;
  armed_.erase(it);
  armed.target->on_timer(armed.tag);
}

}  // namespace meshsim::shared
