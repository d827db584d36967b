#include "sim/shared/sim_world.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::shared {

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

}  // namespace meshsim::shared
