#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster_state.hpp"

namespace meshsim::scheduler {

// A resource pool's placement-group pool (seed 000): PGs reserved up front for
// high-priority work, dynamic PGs made on demand for the rest, and freed PGs handed to
// the next task of a fitting shape instead of being destroyed and re-created.
struct PgPoolConfig {
  bool enable = false;
  std::vector<ResourceVector> high_priority_pg_specs;  // one single-bundle PG each
  bool enable_dynamic_pgs = true;
  std::uint32_t max_dynamic_pgs = 0;  // live dynamic PGs (in use + idle); 0 = no limit
  bool enable_pg_reuse = true;
  // Work at or above this priority takes a reserved PG (the seeds leave the cut to the
  // demo: rollout 1, reward 5, train 9).
  double high_priority_threshold = 5.0;
};

struct PgPoolStats {
  std::uint32_t reserved_total = 0, reserved_in_use = 0;
  std::uint64_t dynamic_created = 0, dynamic_destroyed = 0;
  std::uint32_t dynamic_in_use = 0, dynamic_idle = 0;
  std::uint64_t reuse_hits = 0;  // a PG that served an earlier task handed to a new one
};

class PgPool {
 public:
  struct Entry {
    ResourceVector shape;
    bool reserved = false;
    bool in_use = false;
    bool served_before = false;
    bool operator==(const Entry&) const = default;
  };
  // Everything a state file keeps of a PG pool.
  struct State {
    std::string pool;
    PgPoolConfig config;
    PlacementStrategy strategy = PlacementStrategy::kStrictPack;
    std::map<PgId, Entry> pgs;
    std::uint64_t dynamic_created = 0, dynamic_destroyed = 0, reuse_hits = 0;
  };
  State state() const { return {pool_, config_, strategy_, pgs_, dynamic_created_, dynamic_destroyed_, reuse_hits_}; }
  explicit PgPool(State state)
      : pool_(std::move(state.pool)),
        config_(std::move(state.config)),
        strategy_(state.strategy),
        pgs_(std::move(state.pgs)),
        dynamic_created_(state.dynamic_created),
        dynamic_destroyed_(state.dynamic_destroyed),
        reuse_hits_(state.reuse_hits) {}

  PgPool(std::string pool, PgPoolConfig config, PlacementStrategy strategy)
      : pool_(std::move(pool)), config_(std::move(config)), strategy_(strategy) {}

  // Creates the reserved PGs; those that do not fit yet stay pending in the cluster.
  OpResult reserve(ClusterState& cluster);

  // A ready PG whose bundle fits `need`: a reserved one for high-priority work (else a
  // dynamic one), `preferred` first when it qualifies. nullopt when none can be had.
  std::optional<PgId> acquire(ClusterState& cluster, const ResourceVector& need, bool high_priority,
                              std::optional<PgId> preferred = std::nullopt);
  // Whether acquire would succeed if the pooled PGs in `freeing` were released first.
  bool can_acquire(const ClusterState& cluster, const ResourceVector& need, bool high_priority,
                   const std::vector<PgId>& freeing = {}) const;
  // The PG's task is gone: back to idle, or destroyed (dynamic PGs without reuse).
  void release(ClusterState& cluster, PgId id);
  // Removes one PG for good (delete_agent with destroy_pg), or all of them (shutdown).
  void destroy(ClusterState& cluster, PgId id);
  void destroy_all(ClusterState& cluster);

  bool holds(PgId id) const { return pgs_.count(id) != 0; }
  const std::map<PgId, Entry>& entries() const { return pgs_; }
  bool is_high_priority(double priority) const { return priority >= config_.high_priority_threshold; }
  // The bundle shape of a pooled PG.
  const ResourceVector* shape(PgId id) const;
  const PgPoolConfig& config() const { return config_; }
  PgPoolStats stats() const;
  std::vector<std::string> check_invariants(const ClusterState& cluster) const;

 private:
  std::optional<PgId> find_idle(const ClusterState& cluster, const ResourceVector& need, bool reserved,
                                std::optional<PgId> preferred, const std::vector<PgId>& freeing) const;
  std::uint32_t live_dynamic() const;

  std::string pool_;
  PgPoolConfig config_;
  PlacementStrategy strategy_;
  std::map<PgId, Entry> pgs_;
  std::uint64_t dynamic_created_ = 0, dynamic_destroyed_ = 0, reuse_hits_ = 0;
};

}  // namespace meshsim::scheduler
