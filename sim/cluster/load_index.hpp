#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

// The instance with the smallest load among a pool, kept in an ordered set so that a
// routing decision is O(1) and a load change O(log n): no scan of the pool per request.
// Ties go to the lowest member index.
class LoadIndex {
 public:
  // Adds `member` with `load`, or updates it if present.
  void add(std::uint32_t member, std::int64_t load) {
    if (member >= loads_.size()) loads_.resize(member + 1, kAbsent);
    if (loads_[member] != kAbsent) order_.erase({loads_[member], member});
    loads_[member] = load;
    order_.emplace(load, member);
  }
  // Takes `member` out (an instance that stops taking requests); no-op if absent.
  void remove(std::uint32_t member) {
    if (!contains(member)) return;
    order_.erase({loads_[member], member});
    loads_[member] = kAbsent;
  }
  bool contains(std::uint32_t member) const { return member < loads_.size() && loads_[member] != kAbsent; }
  // The load `member` is indexed by (a member's).
  std::int64_t load_of(std::uint32_t member) const { return loads_.at(member); }
  void update(std::uint32_t member, std::int64_t load) {
    if (member >= loads_.size() || loads_[member] == kAbsent || loads_[member] == load) return;
    order_.erase({loads_[member], member});
    loads_[member] = load;
    order_.emplace(load, member);
  }
  bool empty() const { return order_.empty(); }
  std::size_t size() const { return order_.size(); }
  // Precondition: not empty (a pool with no member to route to is the caller's to handle).
  std::uint32_t least() const {
    MESHSIM_CHECK(!order_.empty(), "LoadIndex::least: the pool has no member to route to");
    return order_.begin()->second;
  }

 private:
  static constexpr std::int64_t kAbsent = INT64_MIN;
  std::vector<std::int64_t> loads_;
  std::set<std::pair<std::int64_t, std::uint32_t>> order_;
};

}  // namespace meshsim::cluster
