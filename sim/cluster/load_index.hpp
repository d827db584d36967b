#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace meshsim::cluster {

// The instance with the smallest load among a pool, kept in an ordered set so that a
// routing decision is O(1) and a load change O(log n): no scan of the pool per request.
// Ties go to the lowest member index.
class LoadIndex {
 public:
  void add(std::uint32_t member, std::int64_t load) {
    if (member >= loads_.size()) loads_.resize(member + 1, kAbsent);
    loads_[member] = load;
    order_.emplace(load, member);
  }
  void update(std::uint32_t member, std::int64_t load) {
    if (member >= loads_.size() || loads_[member] == kAbsent || loads_[member] == load) return;
    order_.erase({loads_[member], member});
    loads_[member] = load;
    order_.emplace(load, member);
  }
  bool empty() const { return order_.empty(); }
  std::size_t size() const { return order_.size(); }
  std::uint32_t least() const { return order_.begin()->second; }

 private:
  static constexpr std::int64_t kAbsent = INT64_MIN;
  std::vector<std::int64_t> loads_;
  std::set<std::pair<std::int64_t, std::uint32_t>> order_;
};

}  // namespace meshsim::cluster
