#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/agent_manager.hpp"
#include "scheduler/pg_pool.hpp"

namespace meshsim::scheduler {

// A core's PG pools, one per resource pool that enables one, and the placement groups
// kept by delete_agent(destroy_pg=false): those hold their node resources until shutdown.
class PgPools {
 public:
  const PgPool* find(const std::string& pool) const;
  PgPool* find(const std::string& pool);
  // The resource pool whose PG pool holds `pg`; nullptr when none does.
  const std::string* owner(PgId pg) const;
  // Adds `pool`'s PG pool and reserves its high-priority PGs; on failure nothing is left
  // behind.
  OpResult add(const std::string& pool, PgPoolConfig config, PlacementStrategy strategy, ClusterState& cluster);
  std::map<std::string, PgPoolStats> stats() const;

  // Kept placement groups, by the resource pool of the agent that had them.
  const std::map<PgId, std::string>& kept() const { return kept_; }
  void keep(PgId pg, const std::string& pool) { kept_[pg] = pool; }

  // Destroys every pooled and kept placement group (shutdown).
  void destroy_all(ClusterState& cluster);

  std::vector<PgPool::State> state() const;
  void restore(const std::vector<PgPool::State>& pools, std::map<PgId, std::string> kept);

  // Each PG pool agrees with the cluster, a pooled PG is in use exactly when one agent of
  // its pool sits in it, and every placement group belongs to an agent, a PG pool or the
  // kept set (and a kept one to nothing else); empty when all is well.
  std::vector<std::string> check_invariants(const AgentManager& agents) const;

 private:
  std::map<std::string, std::unique_ptr<PgPool>> pools_;
  std::map<PgId, std::string> kept_;
};

}  // namespace meshsim::scheduler
