#include "sim/cluster/first_token_watch.hpp"

#include <algorithm>

namespace meshsim::cluster {

void FirstTokenWatch::arrived(std::uint32_t slot, engine::SimTime arrival) {
  if (slot >= by_slot_.size()) by_slot_.resize(slot + 1, 0);
  done(slot);
  by_slot_[slot] = ++submissions_;
  ++waiting_;
  while (!by_arrival_.empty() && !still_waiting(by_arrival_.front())) by_arrival_.pop_front();
  // One request waiting long keeps every later submission behind it: compacted once the
  // list is twice what it must hold.
  if (by_arrival_.size() > 2 * waiting_ + 64) {
    std::erase_if(by_arrival_, [&](const Submission& s) { return !still_waiting(s); });
  }
  by_arrival_.push_back(Submission{arrival, by_slot_[slot], slot});
}

ServingSystem::FirstTokenBacklog FirstTokenWatch::backlog(engine::SimTime cutoff) const {
  ServingSystem::FirstTokenBacklog backlog;
  // Submissions come in arrival order: the recent ones are at the back.
  for (auto it = by_arrival_.rbegin(); it != by_arrival_.rend() && it->arrival >= cutoff; ++it) {
    if (still_waiting(*it)) backlog.recent.push_back(it->arrival);
  }
  std::reverse(backlog.recent.begin(), backlog.recent.end());
  backlog.arrived_before = waiting_ - backlog.recent.size();
  return backlog;
}

}  // namespace meshsim::cluster
