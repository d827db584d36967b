#include "scheduler/sim_world.hpp"

#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {

TimerId SimWorld::call_after(double seconds, std::function<void()> callback) {
  MESHSIM_CHECK(seconds >= 0 && seconds <= engine::SimTime::kMaxSeconds, "call_after: a delay out of range");
  const TimerId id = next_timer_++;
  callbacks_.emplace(id, std::move(callback));
  const auto delay = engine::SimTime::from_us(static_cast<std::int64_t>(std::ceil(seconds * 1e6)));
  sim_.schedule_after(delay, *this, engine::EventPayload{id, 0});
  return id;
}

CancelReply SimWorld::cancel_task(const std::string& agent, const std::string& task_id, double /*timeout_s*/) {
  ++cancels_;
  if (on_cancel_) on_cancel_(agent, task_id);
  return CancelReply{true, 0.0};
}

void SimWorld::on_event(const engine::EventPayload& payload) {
  const auto it = callbacks_.find(payload.a);
  if (it == callbacks_.end()) return;  // cancelled
  auto callback = std::move(it->second);
  callbacks_.erase(it);
  callback();
}

}  // namespace meshsim::scheduler
