#pragma once

// The requests in a serving system still without their first token, and when each came:
// what a TTFT-tracking autoscaler reads every second. Submissions are kept in arrival
// order from the oldest still waiting on (those that got their token are skipped, and
// pruned from the front and compacted as submissions come), so a backlog query reads the
// recent ones alone and the list stays within a constant of the backlog.

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/cluster/serving_system.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

class FirstTokenWatch {
 public:
  // A request arrived at `arrival` (not before the last) into `slot` (the owner's id for
  // it while it is in the system; slots may be reused once it is gone()).
  void arrived(std::uint32_t slot, engine::SimTime arrival);
  // The request in `slot` got its first token, or left the system (either ends its wait;
  // calling both, or one twice, is fine).
  void done(std::uint32_t slot) {
    if (slot >= by_slot_.size() || by_slot_[slot] == 0) return;
    by_slot_[slot] = 0;
    --waiting_;
  }
  std::uint64_t waiting() const { return waiting_; }
  // The waiting requests that arrived at or after `cutoff`, by arrival, and the count of
  // the others.
  ServingSystem::FirstTokenBacklog backlog(engine::SimTime cutoff) const;

 private:
  struct Submission {
    engine::SimTime arrival;
    std::uint64_t number = 0;
    std::uint32_t slot = 0;
  };
  bool still_waiting(const Submission& s) const { return s.slot < by_slot_.size() && by_slot_[s.slot] == s.number; }

  std::vector<std::uint64_t> by_slot_;  // the waiting submission's number per slot; 0 when none
  std::deque<Submission> by_arrival_;
  std::uint64_t submissions_ = 0;
  std::uint64_t waiting_ = 0;
};

}  // namespace meshsim::cluster
