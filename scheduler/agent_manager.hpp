#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/core_time.hpp"

namespace meshsim::scheduler {

// A resource pool: a quota of resources (`resources`) that agents of the pool draw on,
// with a ledger of capacity / reserved / used (spec section 1).
struct PoolSpec {
  std::string name;
  Labels labels;
  ResourceVector resources;  // the quota
  std::uint32_t target_agents = 0;
  PlacementStrategy placement_strategy = PlacementStrategy::kStrictPack;
};

struct Pool {
  PoolSpec spec;
  ResourceLedger ledger;
};

// An agent: the simulated counterpart of a Ray actor, a worker that hosts tasks. It runs
// in a placement-group bundle: its own (created for it) or one it is given.
struct AgentSpec {
  std::string name;
  std::string pool;
  std::string kind;  // the seeds' actor_class
  ResourceVector resources;
  std::optional<PgId> placement_group;  // use this ready PG's bundle instead of a new PG
  std::uint32_t bundle_index = 0;
};

struct Agent {
  AgentId id = kNoAgent;  // given by the AgentManager; reused once the agent is gone
  AgentSpec spec;
  PgId placement_group = 0;
  bool owns_placement_group = false;  // created for this agent
  std::uint32_t node = 0;
  // Run-time state the Scheduler keeps on the agent.
  std::optional<std::string> task;  // the task it runs
  bool dedicated = false;           // created for one task: removed when that task ends
  SimTime last_heartbeat = SimTime::zero();  // the clock when it last reported
  std::string held_for;             // an idle agent kept for this preemptor
  SimTime hold_until = SimTime::zero();      // when the hold lapses
  std::uint64_t hold_timer = 0;     // the timer that ends it (not saved: re-armed on load)
  std::uint64_t hold_serial = 0;    // tells this hold's timer from a stale one
};

// The fine-grained scheduling core over a ClusterState: pools and agents. Every call
// either succeeds or changes nothing (reserve -> place -> commit, or roll back).
class AgentManager {
 public:
  ClusterState& cluster() { return cluster_; }
  const ClusterState& cluster() const { return cluster_; }

  OpResult create_pool(PoolSpec spec);
  // Creates the pool, or updates an existing one's labels, target, strategy and quota (a
  // quota below what the pool already uses is refused).
  OpResult ensure_pool(PoolSpec spec);
  // Only a pool without agents can be removed.
  OpResult remove_pool(const std::string& name);
  const Pool* pool(const std::string& name) const;
  const std::map<std::string, Pool>& pools() const { return pools_; }

  // An agent created for `task` runs it from the start (it is never listed idle).
  OpResult create_agent(AgentSpec spec, std::optional<std::string> task = std::nullopt);
  // Frees the agent's pool quota; with destroy_pg, also its placement group (and so the
  // node resources). An agent running a task is only deleted with `force`.
  OpResult delete_agent(const std::string& name, bool force = false, bool destroy_pg = true);
  OpResult delete_agent(AgentId id, bool force = false, bool destroy_pg = true);
  // All agents, or those of one pool, by name.
  std::vector<const Agent*> list_agents(const std::optional<std::string>& pool = std::nullopt) const;
  // nullptr when there is no such agent (by id: no agent in that slot now).
  const Agent* agent(const std::string& name) const;
  Agent* agent(const std::string& name);
  const Agent* agent(AgentId id) const {
    return id < slots_.size() && slots_[id].id == id ? &slots_[id] : nullptr;
  }
  Agent* agent(AgentId id) { return id < slots_.size() && slots_[id].id == id ? &slots_[id] : nullptr; }

  // A task starts on the agent, or leaves it. Agents without a task are kept listed idle
  // by pool, so a submission finds one without walking them all.
  void assign_task(Agent& agent, const std::string& task);
  // Without `stays` the agent is about to be deleted and is not listed.
  void clear_task(Agent& agent, bool stays = true);
  // An idle agent of `pool` whose resources fit `need`: the one held for `task_id` if
  // any, else the first by name held for nobody; nullptr when there is none.
  Agent* find_idle(const std::string& pool, const ResourceVector& need, const std::string& task_id);

  // Everything a state file keeps; pool ledgers follow from the agents.
  struct State {
    ClusterState::State cluster;
    std::vector<PoolSpec> pools;
    std::vector<Agent> agents;
  };
  State state() const;
  OpResult restore(const State& state);

  // Node ledgers agree with placement groups, pool ledgers with their agents, every agent
  // sits in a ready placement group, exactly those without a task are listed idle; empty
  // when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  ClusterState cluster_;
  std::map<std::string, Pool> pools_;
  // Gives the agent a free slot (the most recently freed first) and indexes its name.
  Agent& insert(Agent agent);

  // Agents by id: the core reaches them by id on every placement and preemption; names
  // (hashed) only at the API's edge; listings sort them by name. A deque, so references
  // stay valid as it grows.
  std::deque<Agent> slots_;
  std::vector<AgentId> free_slots_;
  std::unordered_map<std::string, AgentId> ids_;
  std::map<std::string, std::set<std::string>> idle_;  // agents without a task, by pool
};

}  // namespace meshsim::scheduler
