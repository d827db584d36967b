#pragma once

#include <cstdint>
#include <set>

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
  // Prompt pools under vLLM with prefix caching: the least prefill work, counting the
  // instance's pending tokens plus this request's prompt tokens not cached there (so a
  // cached prefix draws a request until the queue it would join costs more than the
  // prefill it saves). LlmCluster::route_prompt looks at every member: O(members x blocks
  // hit) per request.
  kPrefixAffinity,
};
inline constexpr EnumNames kRoutePolicyNames{
    std::array{std::pair{RoutePolicy::kRoundRobin, std::string_view("round_robin")},
               std::pair{RoutePolicy::kFewestRequests, std::string_view("fewest_requests")},
               std::pair{RoutePolicy::kFewestPendingTokens, std::string_view("fewest_pending_tokens")},
               std::pair{RoutePolicy::kLeastKvMemory, std::string_view("least_kv_memory")},
               std::pair{RoutePolicy::kPrefixAffinity, std::string_view("prefix_affinity")}}};

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
