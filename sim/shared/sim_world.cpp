#include "sim/shared/sim_world.hpp"

#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::shared {

CancelReply SimWorld::cancel_task(const scheduler::Task& task, SimTime timeout) {
  ++cancels_;
  CancelReply reply;
  reply.wait_ahead = true;
  if (agents_ == nullptr) return reply;  // answered at once
  const std::optional<SimTime> answer_in = agents_->answer_in(task);
  MESHSIM_CHECK(!answer_in || *answer_in >= SimTime::zero(), "an agent answers a cancel no earlier than it is asked");
  reply.answered = answer_in && *answer_in <= timeout;
  reply.waited = reply.answered ? *answer_in : timeout;
  if (reply.waited <= SimTime::zero()) {
    agents_->stopped(task.handle, reply.answered);
    return reply;
  }
  std::uint64_t slot = stops_.size();
  if (free_stops_.empty()) {
    stops_.emplace_back();
  } else {
    slot = free_stops_.back();
    free_stops_.pop_back();
  }
  stops_[slot] = PendingStop{task.handle, reply.answered};
  timers_.call_at(sim_.now() + reply.waited, *this, slot);
  return reply;
}

void SimWorld::on_timer(std::uint64_t slot) {
  const PendingStop stop = std::exchange(stops_[slot], {});
  free_stops_.push_back(slot);
  agents_->stopped(stop.task, stop.answered);
}

}  // namespace meshsim::shared
