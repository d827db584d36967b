#include "scheduler/scheduler.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::scheduler {

double Task::work_since_checkpoint(SimTime now) const {
  const double run = elapsed(now);
  if (checkpoint_interval <= 0.0) return run;
  return run - std::floor(run / checkpoint_interval) * checkpoint_interval;
}

Scheduler::Scheduler(const Clock& clock, Actuator* actuator, TimerService* timers)
    : clock_(clock),
      actuator_(actuator),
      timers_(timers),
      holds_(timers, agents_, [this](Agent& agent) {
        // A dedicated agent kept only for its preemptor goes when the hold lapses.
        if (agent.dedicated && !agent.task) remove_agent(agent, PgFate::kRelease);
      }) {
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

OpResult Scheduler::create_pool(PoolSpec spec, PgPoolConfig pg_pool) {
  const std::string name = spec.name;
  const PlacementStrategy strategy = spec.placement_strategy;
  if (auto created = agents_.create_pool(std::move(spec)); !created) return created;
  if (!pg_pool.enable) return OpResult::ok();
  if (auto added = pg_pools_.add(name, std::move(pg_pool), strategy, cluster()); !added) {
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
  if (!pg_pool || !pg_pool->enable || pg_pools_.find(name) != nullptr) return OpResult::ok();
  if (auto added = pg_pools_.add(name, std::move(*pg_pool), strategy, cluster()); !added) {
    return OpResult::fail("ensure_pool '" + name + "': " + added.error);
  }
  return OpResult::ok();
}

OpResult Scheduler::create_agent(AgentSpec spec) {
  const std::string name = spec.name;
  // A pooled PG is handed out by its PG pool alone: an agent put there by hand would
  // share it with the next task the pool places.
  if (spec.placement_group && pg_pools_.owner(*spec.placement_group) != nullptr) {
    return OpResult::fail("create_agent '" + name + "': placement group " + std::to_string(*spec.placement_group) +
                          " belongs to the PG pool of '" + *pg_pools_.owner(*spec.placement_group) +
                          "'; submit_with_pg_preemption places agents there");
  }
  if (auto created = agents_.create_agent(std::move(spec)); !created) return created;
  agents_.agent(name)->last_heartbeat = clock_.now();
  return OpResult::ok();
}

void Scheduler::remove_agent(Agent& agent, PgFate fate) {
  const PgId pg = agent.placement_group;
  holds_.end(agent);
  PgPool* pool = pg_pools_.find(agent.spec.pool);
  if (pool != nullptr && !pool->holds(pg)) pool = nullptr;
  const bool keep = pool == nullptr && fate == PgFate::kKeep && cluster().placement_group(pg) != nullptr;
  if (keep) pg_pools_.keep(pg, agent.spec.pool);
  // A pooled PG is the PG pool's to keep or destroy, not the agent's: kept, it goes back
  // to its PG pool, as when its task ends.
  (void)agents_.delete_agent(agent.id, /*force=*/true, pool == nullptr && fate != PgFate::kKeep);
  if (pool != nullptr && fate == PgFate::kDestroy) pool->destroy(cluster(), pg);
  if (pool != nullptr && fate != PgFate::kDestroy) pool->release(cluster(), pg);
}

OpResult Scheduler::delete_agent(const std::string& name, bool force, bool destroy_pg) {
  Agent* agent = agents_.agent(name);
  if (agent == nullptr) return OpResult::fail("delete_agent: no agent '" + name + "'");
  if (agent->task) {
    if (!force) return OpResult::fail("delete_agent: agent '" + name + "' runs task '" + *agent->task + "'; pass force=true");
    end_task(*tasks_.find(*agent->task), TaskState::kLost, /*keep_agent=*/true);
  }
  remove_agent(*agent, destroy_pg ? PgFate::kDestroy : PgFate::kKeep);
  return OpResult::ok();
}

void Scheduler::record_heartbeat(const std::string& agent_name) {
  if (Agent* agent = agents_.agent(agent_name)) agent->last_heartbeat = clock_.now();
}

Scheduler::HealthReport Scheduler::ensure_agent_health(SimTime timeout) {
  HealthReport report;
  std::vector<AgentSpec> stale;
  for (const Agent* agent : agents_.list_agents()) {
    if (clock_.now() - agent->last_heartbeat > timeout) stale.push_back(agent->spec);
  }
  for (AgentSpec& spec : stale) {
    Agent* agent = agents_.agent(spec.name);
    if (agent->task) {
      report.requeued_tasks.push_back(*agent->task);
      end_task(*tasks_.find(*agent->task), TaskState::kRequeued, /*keep_agent=*/true);
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

const Task& Scheduler::start_task(Task task, Agent& agent) {
  task.agent = agent.spec.name;
  task.agent_id = agent.id;
  task.actor_class = agent.spec.kind;
  agents_.assign_task(agent, task.id);
  holds_.end(agent);
  const Task& started = tasks_.start(std::move(task), clock_.now());
  index_.add(victim_info(started, agents_), clock_.now().seconds());
  return started;
}

OpResult Scheduler::register_running_task(const RunningTaskSpec& spec) {
  const std::string where = "register_running_task '" + spec.task_id + "': ";
  if (spec.task_id.empty()) return OpResult::fail("register_running_task: the task needs an id");
  if (const Task* existing = tasks_.find(spec.task_id); existing != nullptr && existing->state == TaskState::kRunning) {
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

void Scheduler::end_task(Task& task, TaskState state, bool keep_agent) {
  index_.remove(task.seq);
  tasks_.stop(task);
  task.state = state;
  if (state != TaskState::kCompleted) {
    task.lost_work = task.work_since_checkpoint(clock_.now());
    stats_.lost_work += task.lost_work;
  }
  if (state == TaskState::kLost) ++stats_.lost_tasks;
  if (state == TaskState::kRequeued) ++stats_.requeued_tasks;
  Agent* agent = agents_.agent(task.agent_id);
  task.agent_id = kNoAgent;
  if (agent == nullptr) return;
  // A dedicated agent goes with its task; a kept one the caller removes.
  const bool goes = !keep_agent && agent->dedicated && agent->held_for.empty();
  agents_.clear_task(*agent, /*stays=*/!goes && !keep_agent);
  if (goes) remove_agent(*agent, PgFate::kRelease);
}

OpResult Scheduler::complete(const std::string& task_id) {
  Task* found = tasks_.find(task_id);
  if (found == nullptr) return OpResult::fail("complete: no task '" + task_id + "'");
  return complete(*found);
}

OpResult Scheduler::complete(TaskId task) {
  Task* found = tasks_.find(task);
  if (found == nullptr) return OpResult::fail("complete: no task of id " + std::to_string(task));
  return complete(*found);
}

OpResult Scheduler::complete(Task& task) {
  if (task.state != TaskState::kRunning) {
    return OpResult::fail("complete: task '" + task.id + "' is " + std::string(kTaskStateNames.name(task.state)) +
                          ", not running");
  }
  end_task(task, TaskState::kCompleted);
  ++stats_.completed_tasks;
  last_reasons_.erase(task.id);
  tasks_.erase(task);
  return OpResult::ok();
}

// ---- state handlers, stats -----------------------------------------------------------

void Scheduler::register_state_handlers(const std::string& pool, StatePreserver preserver, StateRestorer restorer) {
  handlers_[pool] = Handlers{std::move(preserver), std::move(restorer)};
}

OpResult Scheduler::restore_task(const SavedState& saved_state) {
  Task* found = tasks_.find(saved_state.task_id);
  if (found == nullptr) return OpResult::fail("restore_task: no task '" + saved_state.task_id + "'");
  Task& task = *found;
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
  stats.running_tasks = tasks_.running().size();
  return stats;
}

SchedulerStats summarize(const Scheduler& core) {
  SchedulerStats out;
  for (const Task* task : core.tasks().by_name()) {
    ++out.tasks[std::string(kTaskStateNames.name(task->state))];
    if (task->state == TaskState::kRunning) ++out.pools[task->pool].running_tasks;
  }
  if (const auto completed = core.get_preemption_stats().completed_tasks; completed > 0) {
    out.tasks[std::string(kTaskStateNames.name(TaskState::kCompleted))] += completed;
  }
  for (const auto& [name, pool] : core.agents().pools()) {
    PoolStats& stats = out.pools[name];
    stats.capacity = pool.ledger.capacity();
    stats.used = pool.ledger.used();
    stats.available = pool.ledger.available();
    stats.agents = core.agents().list_agents(name).size();
  }
  for (const auto& node : core.cluster().nodes()) {
    out.node_capacity += node.ledger.capacity();
    out.node_used += node.ledger.used();
  }
  out.nodes = core.cluster().nodes().size();
  out.placement_groups = core.cluster().placement_groups().size();
  return out;
}

void Scheduler::shutdown() {
  std::vector<std::string> names;
  for (const Agent* agent : agents_.list_agents()) names.push_back(agent->spec.name);
  for (const auto& name : names) (void)delete_agent(name, /*force=*/true, /*destroy_pg=*/true);
  pg_pools_.destroy_all(cluster());
}

std::vector<std::string> Scheduler::check_invariants() const {
  std::vector<std::string> problems = agents_.check_invariants();
  const auto add = [&problems](std::vector<std::string> more) {
    for (auto& problem : more) problems.push_back(std::move(problem));
  };
  add(pg_pools_.check_invariants(agents_));
  add(index_.check_invariants());
  add(tasks_.check_invariants());
  for (const Task* listed : tasks_.by_name()) {
    const Task& task = *listed;
    const std::string& id = task.id;
    if (task.state == TaskState::kRunning) {
      const Agent* agent = agents_.agent(task.agent);
      if (agent == nullptr || agent->task != id) problems.push_back("running task " + id + " is not on its agent");
      if (agent != nullptr && agent->id != task.agent_id) problems.push_back("running task " + id + " has a stale agent id");
      if (agent != nullptr && agent->spec.pool != task.pool) {
        problems.push_back("running task " + id + " is in pool '" + task.pool + "' but its agent " + agent->spec.name +
                           " is in pool '" + agent->spec.pool + "'");
      }
    }
    if (task.state == TaskState::kPreempted && !task.saved_state) {
      problems.push_back("preempted task " + id + " has no saved state");
    }
  }
  if (tasks_.running().size() != index_.size()) {
    problems.push_back(std::to_string(tasks_.running().size()) + " running tasks but " + std::to_string(index_.size()) +
                       " indexed");
  }
  for (const Agent* agent : agents_.list_agents()) {
    const Task* task = agent->task ? tasks_.find(*agent->task) : nullptr;
    if (agent->task && (task == nullptr || task->state != TaskState::kRunning)) {
      problems.push_back("agent " + agent->spec.name + " runs task " + *agent->task + " that is not running");
    }
  }
  return problems;
}

}  // namespace meshsim::scheduler
