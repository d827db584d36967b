#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/cluster/load_index.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::cluster {

// How a pool picks the instance for the next request.
enum class RoutePolicy {
  kRoundRobin,
  kFewestRequests,       // requests assigned and not finished (SplitwiseSim's JSQ)
  kFewestPendingTokens,  // prompt tokens not yet prefilled + 1 per request decoding (token_jsq)
  kLeastKvMemory,        // KV-cache tokens held or promised to the requests routed there
};
inline constexpr EnumNames kRoutePolicyNames{
    std::array{std::pair{RoutePolicy::kRoundRobin, std::string_view("round_robin")},
               std::pair{RoutePolicy::kFewestRequests, std::string_view("fewest_requests")},
               std::pair{RoutePolicy::kFewestPendingTokens, std::string_view("fewest_pending_tokens")},
               std::pair{RoutePolicy::kLeastKvMemory, std::string_view("least_kv_memory")}}};

// The instances of one pool that take requests (ACTIVE ones) and the choice among them:
// O(1) per request and O(log n) per load change for the load policies; members join and
// leave as instances are scaled.
class PoolRouter {
 public:
  explicit PoolRouter(RoutePolicy policy) : policy_(policy) {}

  RoutePolicy policy() const { return policy_; }
  bool empty() const { return members_.empty(); }
  std::size_t size() const { return members_.size(); }
  bool contains(std::uint32_t member) const { return index_.contains(member); }

  // Joins the pool (last in round-robin order).
  void add(std::uint32_t member, std::int64_t load) {
    if (index_.contains(member)) return;
    index_.add(member, load);
    members_.push_back(member);
  }
  void remove(std::uint32_t member) {
    if (!index_.contains(member)) return;
    index_.remove(member);
    const auto it = std::find(members_.begin(), members_.end(), member);
    const auto position = static_cast<std::uint32_t>(it - members_.begin());
    members_.erase(it);
    // Round robin goes on with the member that followed the removed one.
    if (position < next_) --next_;
    if (next_ >= members_.size()) next_ = 0;
  }
  void update(std::uint32_t member, std::int64_t load) { index_.update(member, load); }

  // Precondition: not empty (the cluster keeps an ACTIVE instance in each pool it routes to).
  std::uint32_t pick() {
    MESHSIM_CHECK(!members_.empty(), "PoolRouter::pick: the pool has no instance taking requests");
    if (policy_ != RoutePolicy::kRoundRobin) return index_.least();
    const std::uint32_t chosen = members_[next_];
    next_ = (next_ + 1) % static_cast<std::uint32_t>(members_.size());
    return chosen;
  }

 private:
  RoutePolicy policy_;
  LoadIndex index_;
  std::vector<std::uint32_t> members_;  // round-robin order
  std::uint32_t next_ = 0;
};

}  // namespace meshsim::cluster
