#include "scheduler/sim_world.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {

TimerId SimWorld::call_after(double seconds, std::function<void()> callback) {
  MESHSIM_CHECK(seconds >= 0 && seconds <= engine::SimTime::kMaxSeconds, "call_after: a delay out of range");
  const TimerId id = next_timer_++;
  callbacks_.emplace(id, std::move(callback));
  sim_.schedule_after(engine::SimTime::from_seconds_up(seconds), *this, engine::EventPayload{id, 0});
  return id;
}

CancelReply SimWorld::cancel_task(const std::string& agent, const std::string& task_id, double timeout_s) {
  ++cancels_;
  const std::optional<double> answer_in = agents_.answer_in ? agents_.answer_in(agent, task_id) : 0.0;
  MESHSIM_CHECK(!answer_in || *answer_in >= 0, "an agent answers a cancel no earlier than it is asked");
  CancelReply reply;
  reply.answered = answer_in && *answer_in <= timeout_s;
  reply.waited_s = reply.answered ? *answer_in : timeout_s;
  reply.wait_ahead = true;
  if (!agents_.stopped) return reply;
  if (reply.waited_s <= 0) {
    agents_.stopped(agent, task_id, reply.answered);
  } else {
    call_after(reply.waited_s, [this, agent, task_id, answered = reply.answered] {
      agents_.stopped(agent, task_id, answered);
    });
  }
  return reply;
}

void SimWorld::on_event(const engine::EventPayload& payload) {
  const auto it = callbacks_.find(payload.a);
  if (it == callbacks_.end()) return;  // cancelled
  auto callback = std::move(it->second);
  callbacks_.erase(it);
  callback();
}

}  // namespace meshsim::scheduler
