#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/batching/slot_queue.hpp"

namespace meshsim::cluster {

// The waiting requests of one VllmScheduler, in the order its policy admits them.
// FCFS: arrival order, a preempted request back at the front. Priority: by rank (priority,
// then arrival, then the order the requests were first enqueued in), a preempted request
// back at its rank (vLLM's prepend on a priority queue is an insert).
//
// Costs: FCFS O(1) amortized for every operation (a request that leaves while waiting
// leaves a stale entry, skipped when it reaches the front and compacted away once stale
// entries are half the queue: under overload with request timeouts thousands wait, and
// rewriting the queue per time-out would be quadratic in the backlog); priority O(log n).
class VllmWaitingQueue {
 public:
  // Where a request stands: its rank and its first-enqueue order (the tie-break).
  struct Key {
    VllmRank rank;
    std::uint64_t order = 0;
    auto operator<=>(const Key&) const = default;
  };

  explicit VllmWaitingQueue(VllmPolicy policy) : policy_(policy) {}

  // A request arrives.
  void push_back(std::uint32_t slot, const Key& key);
  // A preempted request comes back.
  void push_front(std::uint32_t slot, const Key& key);
  // The next to admit; the queue must not be empty.
  std::uint32_t front() const;
  void pop_front();
  // A waiting request leaves (timed out, moved elsewhere).
  void remove(std::uint32_t slot, const Key& key);

  bool empty() const { return size() == 0; }
  std::size_t size() const;
  // The waiting slots, in admission order.
  std::vector<std::uint32_t> slots() const;
  // Empty when the bookkeeping agrees with itself.
  std::vector<std::string> check_invariants() const;

 private:
  static bool take_stale(std::unordered_map<std::uint32_t, std::uint32_t>& stale, std::uint32_t slot);
  void drop_stale_front();
  void compact();

  VllmPolicy policy_;
  // kFcfs: may hold stale entries, never at its front.
  SlotQueue fcfs_;
  std::unordered_map<std::uint32_t, std::uint32_t> stale_;  // slot -> stale entries
  std::uint64_t stale_total_ = 0;
  // kPriority.
  std::set<std::tuple<Key, std::uint32_t>> ranked_;
};

}  // namespace meshsim::cluster
