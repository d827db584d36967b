#pragma once

// What the scaling side reads of a serving cluster's pools in O(1): each pool's instances
// by state, its INACTIVE instances by id (a restart takes the lowest first), what came to
// it, and, once tracked, the load on its ACTIVE instances. The cluster reports every
// change; the ledger never walks the instances.

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster/serving_options.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::cluster {

// An instance's lifecycle (seed 003's worker states): STARTING (loading weights: costs,
// serves nothing) -> ACTIVE (routed to) -> DRAINING (no new requests; those it has
// finish, or move to ACTIVE instances when evacuated) -> INACTIVE (KV cache flushed,
// memory released; may start again) -> removed.
enum class InstanceState { kStarting, kActive, kDraining, kInactive };
inline constexpr EnumNames kInstanceStateNames{
    std::array{std::pair{InstanceState::kStarting, std::string_view("starting")},
               std::pair{InstanceState::kActive, std::string_view("active")},
               std::pair{InstanceState::kDraining, std::string_view("draining")},
               std::pair{InstanceState::kInactive, std::string_view("inactive")}}};

// A pool's instances by state, kept as states change.
struct PoolTotals {
  std::array<std::uint32_t, 4> by_state{};  // indexed by InstanceState
  // Requests that came to the pool since the run began (admitted to a prompt or mixed
  // instance, or handed to a token instance; moves between instances not counted), and
  // their prompt + output tokens: the arrival rates target tracking can follow.
  std::uint64_t arrived_requests = 0, arrived_tokens = 0;
  std::uint32_t count(InstanceState state) const { return by_state[static_cast<std::size_t>(state)]; }
};

// The requests assigned to ACTIVE instances (running or waiting) and their pending
// prompt tokens.
struct ActiveLoad {
  std::int64_t requests = 0;
  std::int64_t pending_tokens = 0;
};

class PoolLedger {
 public:
  const PoolTotals& totals(InstanceTag tag) const { return pools_[index(tag)]; }
  ServingSystem::InstanceCounts counts() const;
  // Instance `id` of `tag` leaves state `from` (none: it is new to the pool) and enters
  // `to` (none: it left the pool, removed or retagged).
  void move(std::uint32_t id, InstanceTag tag, std::optional<InstanceState> from, std::optional<InstanceState> to);
  // A request of `tokens` (prompt and output) came to the pool.
  void arrived(InstanceTag tag, std::uint64_t tokens);
  // The INACTIVE instance with the lowest id. O(log instances), so an elastic scale-up
  // costs the same in a pool of a thousand or a hundred thousand.
  std::optional<std::uint32_t> first_inactive(InstanceTag tag) const;
  bool listed_inactive(InstanceTag tag, std::uint32_t id) const { return inactive_[index(tag)].contains(id); }

  // ACTIVE loads, once tracked (the ScalingManager turns it on; at 400 instances the
  // updates cost a serving-only replay a quarter of its speed).
  bool tracks_loads() const { return tracks_loads_; }
  void track_loads() { tracks_loads_ = true; }
  const ActiveLoad& tracked_load(InstanceTag tag) const { return loads_[index(tag)]; }
  // An ACTIVE instance of `tag` whose load the ledger holds as `counted` now has `load`
  // (an instance entering ACTIVE has counted nothing, one leaving goes to nothing).
  // Inline: it runs at every change of an ACTIVE instance's load.
  void recount(InstanceTag tag, ActiveLoad& counted, ActiveLoad load) {
    ActiveLoad& sum = loads_[index(tag)];
    sum.requests += load.requests - counted.requests;
    sum.pending_tokens += load.pending_tokens - counted.pending_tokens;
    counted = load;
  }

  // The ledger against `want` (totals counted from the instances) and, when tracked,
  // `walked` (ACTIVE loads summed over them); empty when all agree.
  std::vector<std::string> check_invariants(const std::array<PoolTotals, 3>& want,
                                            const std::array<ActiveLoad, 3>& walked) const;

 private:
  static std::size_t index(InstanceTag tag) { return static_cast<std::size_t>(tag); }

  std::array<PoolTotals, 3> pools_{};                // by InstanceTag
  std::array<std::set<std::uint32_t>, 3> inactive_;  // INACTIVE instances' ids, by InstanceTag
  bool tracks_loads_ = false;
  std::array<ActiveLoad, 3> loads_{};  // by InstanceTag, when tracked
};

}  // namespace meshsim::cluster
