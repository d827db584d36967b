#pragma once

#include <cstdint>
#include <set>

#include "sim/cluster/load_index.hpp"
#include "sim/engine/check.hpp"
#include "sim/cluster/serving_options.hpp"

namespace meshsim::cluster {

// The instances of one pool that take requests (ACTIVE ones) and the choice among them:
// O(1) per request and O(log n) per load change for the load policies, O(log n) for round
// robin (instances in id order, continuing after the last chosen); members join and leave
// in O(log n) as instances are scaled.
class PoolRouter {
 public:
  explicit PoolRouter(RoutePolicy policy) : policy_(policy) {}

  RoutePolicy policy() const { return policy_; }
  bool empty() const { return members_.empty(); }
  std::size_t size() const { return members_.size(); }
  bool contains(std::uint32_t member) const { return index_.contains(member); }
  const std::set<std::uint32_t>& members() const { return members_; }

  void add(std::uint32_t member, std::int64_t load) {
    if (index_.contains(member)) return;
    index_.add(member, load);
    members_.insert(member);
  }
  void remove(std::uint32_t member) {
    if (!index_.contains(member)) return;
    index_.remove(member);
    members_.erase(member);
  }
  void update(std::uint32_t member, std::int64_t load) { index_.update(member, load); }

  // Precondition: not empty (the cluster keeps an ACTIVE instance in each pool it routes to).
  std::uint32_t pick() {
    MESHSIM_CHECK(!members_.empty(), "PoolRouter::pick: the pool has no instance taking requests");
    if (policy_ != RoutePolicy::kRoundRobin) return index_.least();
    auto it = members_.lower_bound(next_);
    if (it == members_.end()) it = members_.begin();
    next_ = *it + 1;
    return *it;
  }

 private:
  RoutePolicy policy_;
  LoadIndex index_;
  std::set<std::uint32_t> members_;  // by id: the round-robin order
  std::uint32_t next_ = 0;           // round robin: the first id to consider next
};

}  // namespace meshsim::cluster
