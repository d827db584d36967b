#include "sim/batching/vllm_waiting_queue.hpp"

namespace meshsim::cluster {

void VllmWaitingQueue::push_back(std::uint32_t slot, const Key& key) {
  if (policy_ == VllmPolicy::kPriority) {
    ranked_.emplace(key, slot);
  } else {
    fcfs_.push_back(slot);
  }
}

void VllmWaitingQueue::push_front(std::uint32_t slot, const Key& key) {
  if (policy_ == VllmPolicy::kPriority) {
    ranked_.emplace(key, slot);
  } else {
    fcfs_.push_front(slot);
  }
}

std::uint32_t VllmWaitingQueue::front() const {
  return policy_ == VllmPolicy::kPriority ? std::get<1>(*ranked_.begin()) : fcfs_.front();
}

void VllmWaitingQueue::pop_front() {
  if (policy_ == VllmPolicy::kPriority) {
    ranked_.erase(ranked_.begin());
    return;
  }
  fcfs_.pop_front();
  drop_stale_front();
}

void VllmWaitingQueue::remove(std::uint32_t slot, const Key& key) {
  if (policy_ == VllmPolicy::kPriority) {
    ranked_.erase({key, slot});
    return;
  }
  ++stale_[slot];
  ++stale_total_;
  drop_stale_front();
  if (stale_total_ > 64 && stale_total_ > fcfs_.size() / 2) compact();
}

std::size_t VllmWaitingQueue::size() const {
  return policy_ == VllmPolicy::kPriority ? ranked_.size() : fcfs_.size() - stale_total_;
}

// A slot's stale entries all come before its live one: it was enqueued again at the back
// after leaving, and it can only be put back at the front (a preemption) once it has been
// admitted, from the front, past them. So the first entries of a slot with stale ones are
// stale.
bool VllmWaitingQueue::take_stale(std::unordered_map<std::uint32_t, std::uint32_t>& stale, std::uint32_t slot) {
  auto it = stale.find(slot);
  if (it == stale.end()) return false;
  if (--it->second == 0) stale.erase(it);
  return true;
}

void VllmWaitingQueue::drop_stale_front() {
  while (!fcfs_.empty() && take_stale(stale_, fcfs_.front())) {
    fcfs_.pop_front();
    --stale_total_;
  }
}

void VllmWaitingQueue::compact() {
  SlotQueue kept;
  for (std::size_t i = 0; i < fcfs_.size(); ++i) {
    if (!take_stale(stale_, fcfs_[i])) kept.push_back(fcfs_[i]);
  }
  fcfs_ = std::move(kept);
  stale_total_ = 0;
}

std::vector<std::uint32_t> VllmWaitingQueue::slots() const {
  std::vector<std::uint32_t> all;
  if (policy_ == VllmPolicy::kPriority) {
    for (const auto& [key, slot] : ranked_) all.push_back(slot);
    return all;
  }
  auto stale = stale_;
  for (std::size_t i = 0; i < fcfs_.size(); ++i) {
    if (!take_stale(stale, fcfs_[i])) all.push_back(fcfs_[i]);
  }
  return all;
}

std::vector<std::string> VllmWaitingQueue::check_invariants() const {
  std::uint64_t stale = 0;
  for (const auto& [slot, count] : stale_) stale += count;
  if (stale != stale_total_ || (!fcfs_.empty() && stale_.contains(fcfs_.front()))) {
    return {"the waiting queue's stale entries are miscounted, or one is at its front"};
  }
  return {};
}

}  // namespace meshsim::cluster
