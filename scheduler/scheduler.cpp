#include "scheduler/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace meshsim::scheduler {

double Task::work_since_checkpoint(double now) const {
  const double elapsed = std::max(0.0, now - start_time);
  if (checkpoint_interval <= 0.0) return elapsed;
  return elapsed - std::floor(elapsed / checkpoint_interval) * checkpoint_interval;
}

Scheduler::Scheduler(const Clock& clock, Actuator* actuator, TimerService* timers)
    : clock_(clock), actuator_(actuator), timers_(timers) {
  index_.configure(policy_);
  set_scheduling_strategy(std::move(*make_scheduling_strategy("binpack")));
}

void Scheduler::set_scheduling_strategy(std::unique_ptr<SchedulingStrategy> strategy) {
  strategy_ = std::move(strategy);
  const SchedulingStrategy* s = strategy_.get();
  cluster().set_node_order(s->node_order(),
                           [s](const ResourceVector& need, const Node& node) { return s->score(need, node); });
}

// ---- pools and agents ----------------------------------------------------------------

OpResult Scheduler::add_pg_pool(const std::string& pool, PgPoolConfig config, PlacementStrategy strategy) {
  auto pg_pool = std::make_unique<PgPool>(pool, std::move(config), strategy);
  if (auto reserved = pg_pool->reserve(cluster()); !reserved) {
    pg_pool->destroy_all(cluster());
    return OpResult::fail("PG pool: " + reserved.error);
  }
  pg_pools_[pool] = std::move(pg_pool);
  return OpResult::ok();
}

OpResult Scheduler::create_pool(PoolSpec spec, PgPoolConfig pg_pool) {
  const std::string name = spec.name;
  const PlacementStrategy strategy = spec.placement_strategy;
  if (auto created = agents_.create_pool(std::move(spec)); !created) return created;
  if (!pg_pool.enable) return OpResult::ok();
  if (auto added = add_pg_pool(name, std::move(pg_pool), strategy); !added) {
    (void)agents_.remove_pool(name);
    return OpResult::fail("create_pool '" + name + "': " + added.error);
  }
  return OpResult::ok();
}

OpResult Scheduler::ensure_pool(PoolSpec spec, std::optional<PgPoolConfig> pg_pool) {
  if (agents_.pool(spec.name) == nullptr) return create_pool(std::move(spec), pg_pool.value_or(PgPoolConfig{}));
  const std::string name = spec.name;
  const PlacementStrategy strategy = spec.placement_strategy;
  if (auto updated = agents_.ensure_pool(std::move(spec)); !updated) return updated;
  // A pool without a PG pool gets one; an existing PG pool keeps its first config
  // (re-shaping reserved PGs under running agents is not supported).
  if (!pg_pool || !pg_pool->enable || pg_pools_.count(name) != 0) return OpResult::ok();
  if (auto added = add_pg_pool(name, std::move(*pg_pool), strategy); !added) {
    return OpResult::fail("ensure_pool '" + name + "': " + added.error);
  }
  return OpResult::ok();
}

OpResult Scheduler::create_agent(AgentSpec spec) {
  const std::string name = spec.name;
  if (auto created = agents_.create_agent(std::move(spec)); !created) return created;
  Agent* agent = agents_.agent(name);
  agent->last_heartbeat = now();
  idle_agents_[agent->spec.pool].insert(name);
  return OpResult::ok();
}

void Scheduler::remove_agent(Agent& agent, PgFate fate) {
  const PgId pg = agent.placement_group;
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  if (const auto idle = idle_agents_.find(agent.spec.pool); idle != idle_agents_.end()) {
    idle->second.erase(agent.spec.name);
  }
  PgPool* pool = nullptr;
  if (const auto it = pg_pools_.find(agent.spec.pool); it != pg_pools_.end() && it->second->holds(pg)) {
    pool = it->second.get();
  }
  const bool keep = pool == nullptr && fate == PgFate::kKeep && cluster().placement_group(pg) != nullptr;
  if (keep) kept_pgs_[pg] = agent.spec.pool;
  // A pooled PG is the PG pool's to keep or destroy, not the agent's.
  (void)agents_.delete_agent(agent.id, /*force=*/true, pool == nullptr && fate != PgFate::kKeep);
  if (pool != nullptr && fate == PgFate::kDestroy) pool->destroy(cluster(), pg);
  if (pool != nullptr && fate == PgFate::kRelease) pool->release(cluster(), pg);
}

OpResult Scheduler::delete_agent(const std::string& name, bool force, bool destroy_pg) {
  Agent* agent = agents_.agent(name);
  if (agent == nullptr) return OpResult::fail("delete_agent: no agent '" + name + "'");
  if (agent->task) {
    if (!force) return OpResult::fail("delete_agent: agent '" + name + "' runs task '" + *agent->task + "'; pass force=true");
    end_task(tasks_.at(*agent->task), TaskState::kLost, /*keep_agent=*/true);
  }
  remove_agent(*agent, destroy_pg ? PgFate::kDestroy : PgFate::kKeep);
  return OpResult::ok();
}

void Scheduler::record_heartbeat(const std::string& agent_name) {
  if (Agent* agent = agents_.agent(agent_name)) agent->last_heartbeat = now();
}

Scheduler::HealthReport Scheduler::ensure_agent_health(double timeout) {
  HealthReport report;
  std::vector<AgentSpec> stale;
  for (const Agent* agent : agents_.list_agents()) {
    if (now() - agent->last_heartbeat > timeout) stale.push_back(agent->spec);
  }
  for (AgentSpec& spec : stale) {
    Agent* agent = agents_.agent(spec.name);
    if (agent->task) {
      report.requeued_tasks.push_back(*agent->task);
      end_task(tasks_.at(*agent->task), TaskState::kRequeued, /*keep_agent=*/true);
    }
    // A PG the agent was given (from a PG pool) goes back to it; the new agent gets its own.
    remove_agent(*agent, PgFate::kRelease);
    spec.placement_group.reset();
    spec.bundle_index = 0;
    if (auto created = create_agent(spec); created) {
      report.recreated_agents.push_back(spec.name);
    } else {
      report.errors.push_back(created.error);
    }
  }
  return report;
}

// ---- tasks ---------------------------------------------------------------------------

void Scheduler::index_add(const Task& task) {
  const Agent* agent = agents_.agent(task.agent_id);
  const bool dedicated = agent != nullptr && agent->dedicated;
  // What its own placement group frees per node (as FreedRoom counts it): the bundles there.
  std::int64_t gpu_on_a_node = 0;
  const PlacementGroup* pg = dedicated && agent->owns_placement_group ? cluster().placement_group(agent->placement_group)
                                                                       : nullptr;
  if (pg != nullptr && pg->state == PgState::kReady) {
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      std::int64_t on_node = 0;
      for (std::size_t other = 0; other < pg->bundles.size(); ++other) {
        if (pg->nodes[other] == pg->nodes[b]) on_node += pg->bundles[other].gpu_milli();
      }
      gpu_on_a_node = std::max(gpu_on_a_node, on_node);
    }
  }
  VictimIndex::TaskInfo info{task.seq, task.pool, task.labels, dedicated ? agent->spec.resources : ResourceVector{},
                             gpu_on_a_node, task.priority, task.start_time, task.deadline()};
  index_.add(std::move(info), now());
}

void Scheduler::start_task(Task task, Agent& agent) {
  task.agent = agent.spec.name;
  task.agent_id = agent.id;
  task.seq = next_seq_++;
  task.start_time = now();
  task.state = TaskState::kRunning;
  task.saved_state.reset();
  task.lost_work = 0.0;
  agent.task = task.id;
  if (const auto idle = idle_agents_.find(agent.spec.pool); idle != idle_agents_.end()) {
    idle->second.erase(agent.spec.name);
  }
  agent.held_for.clear();
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  agent.hold_timer = 0;
  const std::string id = task.id;
  Task& stored = tasks_.insert_or_assign(id, std::move(task)).first->second;
  task_by_seq_[stored.seq] = &stored;
  index_add(stored);
}

OpResult Scheduler::register_running_task(const RunningTaskSpec& spec) {
  const std::string where = "register_running_task '" + spec.task_id + "': ";
  if (spec.task_id.empty()) return OpResult::fail("register_running_task: the task needs an id");
  if (const Task* existing = task(spec.task_id); existing != nullptr && existing->state == TaskState::kRunning) {
    return OpResult::fail(where + "the task is already running on agent '" + existing->agent + "'");
  }
  Agent* agent = agents_.agent(spec.agent_name);
  if (agent == nullptr) return OpResult::fail(where + "no agent '" + spec.agent_name + "'");
  if (!spec.pool_name.empty() && agent->spec.pool != spec.pool_name) {
    return OpResult::fail(where + "agent '" + spec.agent_name + "' is in pool '" + agent->spec.pool + "', not '" +
                          spec.pool_name + "'");
  }
  if (agent->task) return OpResult::fail(where + "agent '" + spec.agent_name + "' already runs '" + *agent->task + "'");
  if (!agent->held_for.empty() && agent->held_for != spec.task_id) {
    return OpResult::fail(where + "agent '" + spec.agent_name + "' is held for '" + agent->held_for + "'");
  }
  Task task;
  static_cast<TaskTraits&>(task) = spec;
  task.id = spec.task_id;
  task.pool = agent->spec.pool;
  start_task(std::move(task), *agent);
  return OpResult::ok();
}

const Task* Scheduler::task(const std::string& id) const {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

void Scheduler::end_task(Task& task, TaskState state, bool keep_agent) {
  index_.remove(task.seq);
  task_by_seq_.erase(task.seq);
  task.state = state;
  if (state != TaskState::kCompleted) {
    task.lost_work = task.work_since_checkpoint(now());
    stats_.lost_work += task.lost_work;
  }
  if (state == TaskState::kLost) ++stats_.lost_tasks;
  if (state == TaskState::kRequeued) ++stats_.requeued_tasks;
  Agent* agent = agents_.agent(task.agent_id);
  task.agent_id = kNoAgent;
  if (agent == nullptr) return;
  agent->task.reset();
  // A dedicated agent goes with its task; listing it idle first would be undone at once.
  if (!keep_agent && agent->dedicated && agent->held_for.empty()) {
    remove_agent(*agent, PgFate::kRelease);
    return;
  }
  idle_agents_[agent->spec.pool].insert(agent->spec.name);
}

OpResult Scheduler::complete(const std::string& task_id) {
  const auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return OpResult::fail("complete: no task '" + task_id + "'");
  Task& task = it->second;
  if (task.state != TaskState::kRunning) {
    return OpResult::fail("complete: task '" + task_id + "' is " + std::string(kTaskStateNames.name(task.state)) +
                          ", not running");
  }
  end_task(task, TaskState::kCompleted);
  ++stats_.completed_tasks;
  last_reasons_.erase(task_id);
  tasks_.erase(it);
  return OpResult::ok();
}

// ---- state handlers, stats -----------------------------------------------------------

void Scheduler::register_state_handlers(const std::string& pool, StatePreserver preserver, StateRestorer restorer) {
  handlers_[pool] = Handlers{std::move(preserver), std::move(restorer)};
}

OpResult Scheduler::restore_task(const SavedState& saved_state) {
  const auto it = tasks_.find(saved_state.task_id);
  if (it == tasks_.end()) return OpResult::fail("restore_task: no task '" + saved_state.task_id + "'");
  Task& task = it->second;
  if (task.state != TaskState::kPreempted) {
    return OpResult::fail("restore_task: task '" + task.id + "' is " + std::string(kTaskStateNames.name(task.state)) +
                          ", only preempted tasks are restored");
  }
  if (const auto h = handlers_.find(task.pool); h != handlers_.end() && h->second.restorer) {
    if (auto restored = h->second.restorer(saved_state); !restored) {
      return OpResult::fail("restore_task '" + task.id + "': restorer for pool '" + task.pool +
                            "' failed: " + restored.error().message);
    }
  }
  task.state = TaskState::kRequeued;
  ++stats_.restored_tasks;
  return OpResult::ok();
}

PreemptionStats Scheduler::get_preemption_stats() const {
  PreemptionStats stats = stats_;
  stats.running_tasks = task_by_seq_.size();
  return stats;
}

SchedulerStats Scheduler::stats() const {
  SchedulerStats out;
  for (const auto& [id, task] : tasks_) {
    ++out.tasks[std::string(kTaskStateNames.name(task.state))];
    if (task.state == TaskState::kRunning) ++out.pools[task.pool].running_tasks;
  }
  if (stats_.completed_tasks > 0) {
    out.tasks[std::string(kTaskStateNames.name(TaskState::kCompleted))] += stats_.completed_tasks;
  }
  for (const auto& [name, pool] : agents_.pools()) {
    PoolStats& stats = out.pools[name];
    stats.capacity = pool.ledger.capacity();
    stats.used = pool.ledger.used();
    stats.available = pool.ledger.available();
    stats.agents = agents_.list_agents(name).size();
  }
  for (const auto& node : cluster().nodes()) {
    out.node_capacity += node.ledger.capacity();
    out.node_used += node.ledger.used();
  }
  out.nodes = cluster().nodes().size();
  out.placement_groups = cluster().placement_groups().size();
  return out;
}

const PgPool* Scheduler::pg_pool(const std::string& pool) const {
  const auto it = pg_pools_.find(pool);
  return it == pg_pools_.end() ? nullptr : it->second.get();
}

std::map<std::string, PgPoolStats> Scheduler::pg_pool_stats() const {
  std::map<std::string, PgPoolStats> out;
  for (const auto& [name, pool] : pg_pools_) out[name] = pool->stats();
  return out;
}

void Scheduler::shutdown() {
  std::vector<std::string> names;
  for (const Agent* agent : agents_.list_agents()) names.push_back(agent->spec.name);
  for (const auto& name : names) (void)delete_agent(name, /*force=*/true, /*destroy_pg=*/true);
  for (auto& [name, pool] : pg_pools_) pool->destroy_all(cluster());
  for (const auto& [id, pool] : kept_pgs_) (void)cluster().remove_placement_group(id);
  kept_pgs_.clear();
}

std::vector<std::string> Scheduler::check_invariants() const {
  std::vector<std::string> problems = agents_.check_invariants();
  for (const auto& [name, pool] : pg_pools_) {
    for (auto& problem : pool->check_invariants(cluster())) problems.push_back(std::move(problem));
  }
  for (auto& problem : index_.check_invariants()) problems.push_back(std::move(problem));
  std::size_t running = 0;
  for (const auto& [id, task] : tasks_) {
    if (task.state == TaskState::kRunning) {
      ++running;
      const Agent* agent = agents_.agent(task.agent);
      if (agent == nullptr || agent->task != id) problems.push_back("running task " + id + " is not on its agent");
      if (agent != nullptr && agent->id != task.agent_id) problems.push_back("running task " + id + " has a stale agent id");
      if (const auto it = task_by_seq_.find(task.seq); it == task_by_seq_.end() || it->second != &task) {
        problems.push_back("running task " + id + " is not indexed");
      }
    }
    if (task.state == TaskState::kPreempted && !task.saved_state) {
      problems.push_back("preempted task " + id + " has no saved state");
    }
  }
  if (running != task_by_seq_.size() || running != index_.size()) {
    problems.push_back(std::to_string(running) + " running tasks but " + std::to_string(task_by_seq_.size()) +
                       " registered and " + std::to_string(index_.size()) + " indexed");
  }
  std::size_t idle = 0;
  for (const auto& [pool, names] : idle_agents_) idle += names.size();
  std::size_t without_task = 0;
  for (const Agent* agent : agents_.list_agents()) {
    if (!agent->task) {
      ++without_task;
      const auto it = idle_agents_.find(agent->spec.pool);
      if (it == idle_agents_.end() || it->second.count(agent->spec.name) == 0) {
        problems.push_back("idle agent " + agent->spec.name + " is not listed as idle");
      }
    }
    if (agent->task && (task(*agent->task) == nullptr || task(*agent->task)->state != TaskState::kRunning)) {
      problems.push_back("agent " + agent->spec.name + " runs task " + *agent->task + " that is not running");
    }
  }
  if (idle != without_task) problems.push_back("idle agent list holds agents that are busy or gone");
  std::set<PgId> owned;
  for (const Agent* agent : agents_.list_agents()) owned.insert(agent->placement_group);
  for (const auto& [id, pool] : kept_pgs_) {
    if (!owned.insert(id).second) problems.push_back("kept placement group " + std::to_string(id) + " is in use");
    if (cluster().placement_group(id) == nullptr) {
      problems.push_back("kept placement group " + std::to_string(id) + " does not exist");
    }
  }
  std::vector<PgId> pg_ids;
  for (const auto& [id, pg] : cluster().placement_groups()) pg_ids.push_back(id);
  std::sort(pg_ids.begin(), pg_ids.end());  // problems in id order
  for (const PgId id : pg_ids) {
    const bool pooled = std::any_of(pg_pools_.begin(), pg_pools_.end(),
                                    [id](const auto& entry) { return entry.second->holds(id); });
    if (!pooled && owned.count(id) == 0) {
      problems.push_back("placement group " + std::to_string(id) + " belongs to no agent, PG pool or kept set");
    }
  }
  return problems;
}

}  // namespace meshsim::scheduler
