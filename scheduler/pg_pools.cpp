#include "scheduler/pg_pools.hpp"

#include <algorithm>
#include <set>

namespace meshsim::scheduler {

const PgPool* PgPools::find(const std::string& pool) const {
  const auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : it->second.get();
}

PgPool* PgPools::find(const std::string& pool) {
  const auto it = pools_.find(pool);
  return it == pools_.end() ? nullptr : it->second.get();
}

const std::string* PgPools::owner(PgId pg) const {
  for (const auto& [name, pool] : pools_) {
    if (pool->holds(pg)) return &name;
  }
  return nullptr;
}

OpResult PgPools::add(const std::string& pool, PgPoolConfig config, PlacementStrategy strategy, ClusterState& cluster) {
  auto pg_pool = std::make_unique<PgPool>(pool, std::move(config), strategy);
  if (auto reserved = pg_pool->reserve(cluster); !reserved) {
    pg_pool->destroy_all(cluster);
    return OpResult::fail("PG pool: " + reserved.error);
  }
  pools_[pool] = std::move(pg_pool);
  return OpResult::ok();
}

std::map<std::string, PgPoolStats> PgPools::stats() const {
  std::map<std::string, PgPoolStats> out;
  for (const auto& [name, pool] : pools_) out[name] = pool->stats();
  return out;
}

void PgPools::destroy_all(ClusterState& cluster) {
  for (auto& [name, pool] : pools_) pool->destroy_all(cluster);
  for (const auto& [id, pool] : kept_) (void)cluster.remove_placement_group(id);
  kept_.clear();
}

std::vector<PgPool::State> PgPools::state() const {
  std::vector<PgPool::State> out;
  for (const auto& [name, pool] : pools_) out.push_back(pool->state());
  return out;
}

void PgPools::restore(const std::vector<PgPool::State>& pools, std::map<PgId, std::string> kept) {
  pools_.clear();
  for (const auto& pool : pools) pools_[pool.pool] = std::make_unique<PgPool>(pool);
  kept_ = std::move(kept);
}

std::vector<std::string> PgPools::check_invariants(const AgentManager& agents) const {
  const ClusterState& cluster = agents.cluster();
  std::vector<std::string> problems;
  for (const auto& [name, pool] : pools_) {
    if (agents.pools().count(name) == 0) problems.push_back("PG pool " + name + " belongs to no pool");
    for (auto& problem : pool->check_invariants(cluster)) problems.push_back(std::move(problem));
  }
  std::set<PgId> owned;
  std::map<PgId, std::vector<const Agent*>> sitting;
  for (const Agent* agent : agents.list_agents()) {
    owned.insert(agent->placement_group);
    sitting[agent->placement_group].push_back(agent);
  }
  // In use is derived from who sits where: a state file that says otherwise would hand
  // an occupied PG to the next task.
  for (const auto& [name, pool] : pools_) {
    for (const auto& [id, entry] : pool->entries()) {
      const std::vector<const Agent*>& in = sitting[id];
      const std::string pg = "placement group " + std::to_string(id) + " of the PG pool of " + name;
      if (entry.in_use && in.empty()) problems.push_back(pg + " is marked in use but no agent sits in it");
      if (!entry.in_use && !in.empty()) problems.push_back(pg + " is marked free but agent " + in[0]->spec.name + " sits in it");
      if (in.size() > 1) problems.push_back(pg + " holds " + std::to_string(in.size()) + " agents");
      for (const Agent* agent : in) {
        if (agent->spec.pool != name) problems.push_back(pg + " holds agent " + agent->spec.name + " of pool " + agent->spec.pool);
      }
    }
  }
  for (const auto& [id, pool] : kept_) {
    if (!owned.insert(id).second) problems.push_back("kept placement group " + std::to_string(id) + " is in use");
    if (cluster.placement_group(id) == nullptr) {
      problems.push_back("kept placement group " + std::to_string(id) + " does not exist");
    }
  }
  std::vector<PgId> pg_ids;
  for (const auto& [id, pg] : cluster.placement_groups()) pg_ids.push_back(id);
  std::sort(pg_ids.begin(), pg_ids.end());  // problems in id order
  for (const PgId id : pg_ids) {
    const bool pooled =
        std::any_of(pools_.begin(), pools_.end(), [id](const auto& entry) { return entry.second->holds(id); });
    if (!pooled && owned.count(id) == 0) {
      problems.push_back("placement group " + std::to_string(id) + " belongs to no agent, PG pool or kept set");
    }
  }
  return problems;
}

}  // namespace meshsim::scheduler
