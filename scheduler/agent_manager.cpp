#include "scheduler/agent_manager.hpp"

#include <algorithm>

namespace meshsim::scheduler {

OpResult AgentManager::create_pool(PoolSpec spec) {
  if (spec.name.empty()) return OpResult::fail("create_pool: the pool needs a name");
  if (pools_.count(spec.name) != 0) return OpResult::fail("create_pool: pool '" + spec.name + "' already exists");
  if (!spec.resources.is_non_negative()) {
    return OpResult::fail("create_pool: pool '" + spec.name + "' has negative resources " + spec.resources.to_string());
  }
  ResourceLedger ledger(spec.resources);
  const std::string name = spec.name;
  pools_.emplace(name, Pool{std::move(spec), std::move(ledger)});
  return OpResult::ok();
}

OpResult AgentManager::ensure_pool(PoolSpec spec) {
  const auto it = pools_.find(spec.name);
  if (it == pools_.end()) return create_pool(std::move(spec));
  Pool& pool = it->second;
  if (auto resized = pool.ledger.resize(spec.resources); !resized) {
    return OpResult::fail("ensure_pool: pool '" + spec.name + "': " + resized.error().message);
  }
  pool.spec = std::move(spec);
  return OpResult::ok();
}

OpResult AgentManager::remove_pool(const std::string& name) {
  if (pools_.count(name) == 0) return OpResult::fail("remove_pool: no pool '" + name + "'");
  if (!list_agents(name).empty()) return OpResult::fail("remove_pool: pool '" + name + "' still has agents");
  pools_.erase(name);
  return OpResult::ok();
}

const Pool* AgentManager::pool(const std::string& name) const {
  const auto it = pools_.find(name);
  return it == pools_.end() ? nullptr : &it->second;
}

const Agent* AgentManager::agent(const std::string& name) const {
  const auto it = ids_.find(name);
  return it == ids_.end() ? nullptr : &slots_[it->second];
}

Agent* AgentManager::agent(const std::string& name) {
  const auto it = ids_.find(name);
  return it == ids_.end() ? nullptr : &slots_[it->second];
}

Agent& AgentManager::insert(Agent agent) {
  const AgentId id = free_slots_.empty() ? static_cast<AgentId>(slots_.size()) : free_slots_.back();
  agent.id = id;
  if (free_slots_.empty()) {
    slots_.push_back(std::move(agent));
  } else {
    free_slots_.pop_back();
    slots_[id] = std::move(agent);
  }
  ids_.emplace(slots_[id].spec.name, id);
  if (!slots_[id].task) idle_[slots_[id].spec.pool].insert(slots_[id].spec.name);
  return slots_[id];
}

void AgentManager::assign_task(Agent& agent, const std::string& task) {
  if (!agent.task) {
    if (const auto idle = idle_.find(agent.spec.pool); idle != idle_.end()) idle->second.erase(agent.spec.name);
  }
  agent.task = task;
}

void AgentManager::clear_task(Agent& agent, bool stays) {
  agent.task.reset();
  if (stays) idle_[agent.spec.pool].insert(agent.spec.name);
}

Agent* AgentManager::find_idle(const std::string& pool, const ResourceVector& need, const std::string& task_id) {
  Agent* best = nullptr;
  const auto idle = idle_.find(pool);
  if (idle == idle_.end()) return nullptr;
  for (const std::string& name : idle->second) {
    Agent* found = agent(name);
    if (!need.fits_in(found->spec.resources)) continue;
    if (found->held_for == task_id) return found;  // held for this very task
    if (found->held_for.empty() && best == nullptr) best = found;
  }
  return best;
}

OpResult AgentManager::create_agent(AgentSpec spec, std::optional<std::string> task) {
  // Built only on failure: agents are created on every batch task's start.
  const auto where = [&spec] { return "create_agent '" + spec.name + "': "; };
  if (spec.name.empty()) return OpResult::fail("create_agent: the agent needs a name");
  if (ids_.count(spec.name) != 0) return OpResult::fail(where() + "an agent of that name exists");
  const auto pool_it = pools_.find(spec.pool);
  if (pool_it == pools_.end()) return OpResult::fail(where() + "no pool '" + spec.pool + "'");
  Pool& pool = pool_it->second;

  // 1. Reserve the agent's slot in the pool quota.
  if (auto reserved = pool.ledger.reserve(spec.resources); !reserved) {
    return OpResult::fail(where() + "pool '" + spec.pool + "' quota: " + reserved.error().message);
  }
  // 2. Place it: in the given placement group's bundle, or in a new one.
  Agent agent;
  if (spec.placement_group) {
    const PlacementGroup* pg = cluster_.placement_group(*spec.placement_group);
    std::string problem;
    if (pg == nullptr) {
      problem = "no placement group " + std::to_string(*spec.placement_group);
    } else if (pg->state != PgState::kReady) {
      problem = "placement group " + std::to_string(pg->id) + " is not ready";
    } else if (spec.bundle_index >= pg->bundles.size()) {
      problem = "placement group " + std::to_string(pg->id) + " has no bundle " + std::to_string(spec.bundle_index);
    } else if (!spec.resources.fits_in(pg->bundles[spec.bundle_index])) {
      problem = "needs " + spec.resources.to_string() + ", the bundle has " + pg->bundles[spec.bundle_index].to_string();
    }
    if (!problem.empty()) {
      pool.ledger.rollback(spec.resources);
      return OpResult::fail(where() + problem);
    }
    agent.placement_group = pg->id;
    agent.node = pg->nodes[spec.bundle_index];
  } else {
    auto pg = cluster_.create_placement_group("agent:" + spec.name, {spec.resources}, pool.spec.placement_strategy,
                                              /*pend_if_unplaceable=*/false);
    if (!pg.result.success) {
      pool.ledger.rollback(spec.resources);
      return OpResult::fail(where() + pg.result.error);
    }
    agent.placement_group = *pg.id;
    agent.owns_placement_group = true;
    agent.node = cluster_.placement_group(*pg.id)->nodes[0];
  }
  // 3. Commit.
  pool.ledger.commit(spec.resources);
  agent.spec = std::move(spec);
  agent.task = std::move(task);
  insert(std::move(agent));
  return OpResult::ok();
}

OpResult AgentManager::delete_agent(const std::string& name, bool force, bool destroy_pg) {
  const auto it = ids_.find(name);
  if (it == ids_.end()) return OpResult::fail("delete_agent: no agent '" + name + "'");
  return delete_agent(it->second, force, destroy_pg);
}

OpResult AgentManager::delete_agent(AgentId id, bool force, bool destroy_pg) {
  Agent* found = agent(id);
  if (found == nullptr) return OpResult::fail("delete_agent: no agent with id " + std::to_string(id));
  Agent& gone = *found;
  if (gone.task && !force) {
    return OpResult::fail("delete_agent: agent '" + gone.spec.name + "' runs task '" + *gone.task + "'; pass force=true");
  }
  pools_.at(gone.spec.pool).ledger.release(gone.spec.resources);
  if (destroy_pg) {
    // A PG handed to the agent may already be gone if its owner removed it.
    if (cluster_.placement_group(gone.placement_group) != nullptr) {
      (void)cluster_.remove_placement_group(gone.placement_group);
    }
  }
  ids_.erase(gone.spec.name);
  if (const auto idle = idle_.find(gone.spec.pool); idle != idle_.end()) idle->second.erase(gone.spec.name);
  gone = Agent{};  // id kNoAgent: the slot is free
  free_slots_.push_back(id);
  return OpResult::ok();
}

std::vector<const Agent*> AgentManager::list_agents(const std::optional<std::string>& pool) const {
  std::vector<const Agent*> out;
  for (const auto& [name, id] : ids_) {
    const Agent& agent = slots_[id];
    if (!pool || agent.spec.pool == *pool) out.push_back(&agent);
  }
  std::sort(out.begin(), out.end(), [](const Agent* a, const Agent* b) { return a->spec.name < b->spec.name; });
  return out;
}

AgentManager::State AgentManager::state() const {
  State out;
  out.cluster = cluster_.state();
  for (const auto& [name, pool] : pools_) out.pools.push_back(pool.spec);
  for (const Agent* agent : list_agents()) out.agents.push_back(*agent);
  return out;
}

OpResult AgentManager::restore(const State& state) {
  AgentManager next;
  if (auto restored = next.cluster_.restore(state.cluster); !restored) return restored;
  for (const auto& spec : state.pools) next.pools_.emplace(spec.name, Pool{spec, ResourceLedger(spec.resources)});
  for (const auto& agent : state.agents) {
    const auto pool = next.pools_.find(agent.spec.pool);
    if (pool == next.pools_.end()) return OpResult::fail("agent " + agent.spec.name + " names no known pool");
    if (auto reserved = pool->second.ledger.reserve(agent.spec.resources); !reserved) {
      return OpResult::fail("agent " + agent.spec.name + " exceeds the quota of pool " + agent.spec.pool);
    }
    pool->second.ledger.commit(agent.spec.resources);
    if (next.ids_.count(agent.spec.name) != 0) return OpResult::fail("agent " + agent.spec.name + " is listed twice");
    next.insert(agent);
  }
  *this = std::move(next);
  return OpResult::ok();
}

std::vector<std::string> AgentManager::check_invariants() const {
  std::vector<std::string> problems = cluster_.check_invariants();
  std::map<std::string, ResourceVector> used;
  std::size_t without_task = 0;
  for (const Agent* agent : list_agents()) {
    used[agent->spec.pool] += agent->spec.resources;
    if (!agent->task) {
      ++without_task;
      const auto it = idle_.find(agent->spec.pool);
      if (it == idle_.end() || it->second.count(agent->spec.name) == 0) {
        problems.push_back("idle agent " + agent->spec.name + " is not listed as idle");
      }
    }
    const PlacementGroup* pg = cluster_.placement_group(agent->placement_group);
    if (pg == nullptr || pg->state != PgState::kReady) {
      problems.push_back("agent " + agent->spec.name + " has no ready placement group");
    } else if (agent->spec.bundle_index >= pg->bundles.size() || agent->spec.bundle_index >= pg->nodes.size() ||
               pg->nodes[agent->spec.bundle_index] != agent->node) {
      problems.push_back("agent " + agent->spec.name + " is not on bundle " + std::to_string(agent->spec.bundle_index) +
                         " of placement group " + std::to_string(agent->placement_group));
    }
    if (agent->node >= cluster_.nodes().size()) {
      problems.push_back("agent " + agent->spec.name + " is on node " + std::to_string(agent->node) + " of " +
                         std::to_string(cluster_.nodes().size()));
    }
    if (pools_.count(agent->spec.pool) == 0) {
      problems.push_back("agent " + agent->spec.name + " is in pool " + agent->spec.pool + ", which does not exist");
    }
    if (agent->spec.placement_group && *agent->spec.placement_group != agent->placement_group) {
      problems.push_back("agent " + agent->spec.name + " was given placement group " +
                         std::to_string(*agent->spec.placement_group) + " but is in " +
                         std::to_string(agent->placement_group));
    }
  }
  for (const auto& [name, pool] : pools_) {
    const auto& ledger = pool.ledger;
    if (!(ledger.used() + ledger.reserved()).fits_in(ledger.capacity())) {
      problems.push_back("pool " + name + " is over its quota");
    }
    if (!(ledger.used() == used[name])) {
      problems.push_back("pool " + name + " books " + ledger.used().to_string() + " but its agents hold " +
                         used[name].to_string());
    }
    if (!ledger.reserved().is_zero()) problems.push_back("pool " + name + " has a reservation left over");
  }
  std::size_t idle = 0;
  for (const auto& [pool, names] : idle_) idle += names.size();
  if (idle != without_task) problems.push_back("idle agent list holds agents that are busy or gone");
  return problems;
}

}  // namespace meshsim::scheduler
