#include "scheduler/scheduler.hpp"

#include <algorithm>
#include <cmath>

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

OpResult Scheduler::create_pool(PoolSpec spec, PgPoolConfig pg_pool) {
  const std::string name = spec.name;
  const PlacementStrategy strategy = spec.placement_strategy;
  if (auto created = agents_.create_pool(std::move(spec)); !created) return created;
  if (pg_pool.enable) {
    auto pool = std::make_unique<PgPool>(name, std::move(pg_pool), strategy);
    if (auto reserved = pool->reserve(cluster()); !reserved) {
      pool->destroy_all(cluster());
      (void)agents_.remove_pool(name);
      return OpResult::fail("create_pool '" + name + "': PG pool: " + reserved.error);
    }
    pg_pools_[name] = std::move(pool);
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
  if (pg_pool && pg_pool->enable && pg_pools_.count(name) == 0) {
    auto pool = std::make_unique<PgPool>(name, std::move(*pg_pool), strategy);
    if (auto reserved = pool->reserve(cluster()); !reserved) {
      pool->destroy_all(cluster());
      return OpResult::fail("ensure_pool '" + name + "': PG pool: " + reserved.error);
    }
    pg_pools_[name] = std::move(pool);
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
  const std::string name = agent.spec.name;
  const PgId pg = agent.placement_group;
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  idle_agents_[agent.spec.pool].erase(name);
  PgPool* pool = nullptr;
  if (const auto it = pg_pools_.find(agent.spec.pool); it != pg_pools_.end() && it->second->holds(pg)) {
    pool = it->second.get();
  }
  // A pooled PG is the PG pool's to keep or destroy, not the agent's.
  (void)agents_.delete_agent(name, /*force=*/true, pool == nullptr && fate != PgFate::kKeep);
  if (pool != nullptr && fate == PgFate::kDestroy) pool->destroy(cluster(), pg);
  if (pool != nullptr && fate == PgFate::kRelease) pool->release(cluster(), pg);
}

OpResult Scheduler::delete_agent(const std::string& name, bool force, bool destroy_pg) {
  Agent* agent = agents_.agent(name);
  if (agent == nullptr) return OpResult::fail("delete_agent: no agent '" + name + "'");
  if (agent->task) {
    if (!force) return OpResult::fail("delete_agent: agent '" + name + "' runs task '" + *agent->task + "'; pass force=true");
    Task& task = tasks_.at(*agent->task);
    index_.remove(task.seq);
    task_by_seq_.erase(task.seq);
    task.state = TaskState::kLost;
    task.lost_work = task.work_since_checkpoint(now());
    ++stats_.lost_tasks;
    stats_.lost_work += task.lost_work;
    agent->task.reset();
    idle_agents_[agent->spec.pool].insert(name);
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
      Task& task = tasks_.at(*agent->task);
      index_.remove(task.seq);
      task_by_seq_.erase(task.seq);
      task.lost_work = task.work_since_checkpoint(now());
      task.state = TaskState::kRequeued;
      ++stats_.requeued_tasks;
      stats_.lost_work += task.lost_work;
      report.requeued_tasks.push_back(task.id);
      agent->task.reset();
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
  const Agent* agent = agents_.agent(task.agent);
  index_.add(VictimIndex::TaskInfo{task.seq, task.pool, task.labels,
                                   agent != nullptr && agent->dedicated ? agent->spec.resources : ResourceVector{},
                                   task.priority, task.start_time, task.deadline()},
             now());
}

void Scheduler::start_task(Task task, Agent& agent) {
  task.agent = agent.spec.name;
  task.seq = next_seq_++;
  task.start_time = now();
  task.state = TaskState::kRunning;
  task.saved_state.reset();
  task.lost_work = 0.0;
  agent.task = task.id;
  idle_agents_[agent.spec.pool].erase(agent.spec.name);
  agent.held_for.clear();
  if (agent.hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent.hold_timer);
  agent.hold_timer = 0;
  task_by_seq_[task.seq] = task.id;
  const std::string id = task.id;
  tasks_.insert_or_assign(id, std::move(task));
  index_add(tasks_.at(id));
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
  task.id = spec.task_id;
  task.pool = agent->spec.pool;
  task.priority = spec.priority;
  task.labels = spec.labels;
  task.estimated_duration = spec.estimated_duration;
  task.payload = spec.payload;
  task.checkpoint_interval = spec.checkpoint_interval;
  start_task(std::move(task), *agent);
  return OpResult::ok();
}

const Task* Scheduler::task(const std::string& id) const {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

void Scheduler::detach_from_agent(Task& task) {
  index_.remove(task.seq);
  task_by_seq_.erase(task.seq);
  Agent* agent = agents_.agent(task.agent);
  if (agent == nullptr) return;
  agent->task.reset();
  idle_agents_[agent->spec.pool].insert(agent->spec.name);
  if (agent->dedicated && agent->held_for.empty()) remove_agent(*agent, PgFate::kRelease);
}

OpResult Scheduler::complete(const std::string& task_id) {
  const auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return OpResult::fail("complete: no task '" + task_id + "'");
  Task& task = it->second;
  if (task.state != TaskState::kRunning) {
    return OpResult::fail("complete: task '" + task_id + "' is " + std::string(kTaskStateNames.name(task.state)) +
                          ", not running");
  }
  detach_from_agent(task);
  task.state = TaskState::kCompleted;
  return OpResult::ok();
}

// ---- preemption ----------------------------------------------------------------------

PolicyUpdateResult Scheduler::update_preemption_policy(const PolicyUpdate& update) {
  auto result = update_policy(policy_, update);
  if (result.result.success) index_.configure(policy_);
  return result;
}

PreemptionEvaluation Scheduler::evaluate_preemption(const IncomingTask& incoming, std::size_t k) {
  PreemptionEvaluation out;
  const auto evaluation = index_.evaluate(incoming, now(), k);
  out.eligible = evaluation.eligible;
  out.should_preempt = evaluation.eligible > 0;
  last_reasons_.clear();
  for (const auto& candidate : evaluation.best) {
    const Task& task = tasks_.at(task_by_seq_.at(candidate.seq));
    out.candidates.push_back(
        PreemptionCandidate{task.id, task.agent, task.pool, task.priority, candidate.score, candidate.reason});
    last_reasons_[task.id] = candidate.reason;
  }
  return out;
}

PreemptionOutcome Scheduler::preempt(Task& victim, const std::string& reason, const std::string& preemptor,
                                     const std::string& hold_for) {
  ScopedLatency latency(metrics_.preemption_execution_latency_ms);
  ++metrics_.preemption_count[{victim.pool, reason}];
  PreemptionOutcome out;
  const double at = now();
  // 1. Save the state: the pool's preserver, else the snapshot itself.
  SavedState snapshot{victim.id,       victim.pool, victim.agent, victim.priority, victim.labels,
                      victim.estimated_duration, std::max(0.0, at - victim.start_time), victim.payload, std::nullopt};
  if (const auto h = handlers_.find(victim.pool); h != handlers_.end() && h->second.preserver) {
    auto preserved = h->second.preserver(snapshot);
    if (preserved) {
      snapshot.custom = std::move(*preserved);
      out.saved_state = snapshot;
    } else {
      out.state_error = "preserver for pool '" + victim.pool + "' failed: " + preserved.error().message;
    }
  } else {
    out.saved_state = snapshot;
  }
  // 2. Cancel, waiting at most cancel_timeout; an agent that does not answer is killed.
  CancelReply reply;
  if (actuator_ != nullptr) reply = actuator_->cancel_task(victim.agent, victim.id, policy_.cancel_timeout);
  out.cancel_success = reply.answered;
  out.cancel_wait = std::min(reply.waited_s, policy_.cancel_timeout);
  // 3. Free the slot (or hold it for the named preemptor).
  Agent* agent = agents_.agent(victim.agent);
  if (agent != nullptr && !hold_for.empty()) {
    agent->held_for = hold_for;
    arm_hold(*agent, at + policy_.hold_timeout);
  }
  detach_from_agent(victim);
  victim.lost_work = victim.work_since_checkpoint(at);
  victim.saved_state = out.saved_state;
  victim.state = out.saved_state ? TaskState::kPreempted : TaskState::kLost;
  if (!out.saved_state) ++stats_.lost_tasks;
  // 4. Count it.
  ++stats_.total_preemptions;
  if (reason == kPreemptReasonNames.name(PreemptReason::kSamePool)) ++stats_.same_pool_preemptions;
  if (reason == kPreemptReasonNames.name(PreemptReason::kCrossPool)) ++stats_.cross_pool_preemptions;
  if (reason == kPreemptReasonNames.name(PreemptReason::kLabel)) ++stats_.label_preemptions;
  if (reason == "manual_preemption") ++stats_.manual_preemptions;
  stats_.lost_work += victim.lost_work;
  stats_.recent_preemptions.push_front(
      PreemptionRecord{at, victim.id, victim.pool, victim.priority, reason, victim.lost_work, preemptor});
  if (stats_.recent_preemptions.size() > kRecentPreemptions) stats_.recent_preemptions.pop_back();
  return out;
}

void Scheduler::arm_hold(Agent& agent, double until) {
  agent.hold_until = until;
  agent.hold_serial = ++hold_serial_;
  if (timers_ == nullptr) return;
  const std::string agent_name = agent.spec.name;
  const std::uint64_t serial = agent.hold_serial;
  agent.hold_timer = timers_->call_after(std::max(0.0, until - now()),
                                         [this, agent_name, serial] { release_hold(agent_name, serial); });
}

void Scheduler::release_hold(const std::string& agent_name, std::uint64_t serial) {
  Agent* agent = agents_.agent(agent_name);
  if (agent == nullptr || agent->hold_serial != serial || agent->held_for.empty()) return;
  agent->held_for.clear();
  agent->hold_timer = 0;
  if (agent->dedicated && !agent->task) remove_agent(*agent, PgFate::kRelease);
}

PreemptionOutcome Scheduler::execute_preemption(const std::string& task_id, const std::string& agent_name,
                                                const std::string& hold_for) {
  const auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.state != TaskState::kRunning) {
    PreemptionOutcome out;
    out.result = OpResult::fail("execute_preemption: no running task '" + task_id + "'");
    return out;
  }
  if (it->second.agent != agent_name) {
    PreemptionOutcome out;
    out.result = OpResult::fail("execute_preemption: task '" + task_id + "' runs on agent '" + it->second.agent +
                                "', not '" + agent_name + "'");
    return out;
  }
  const auto reason = last_reasons_.find(task_id);
  const std::string why =
      reason == last_reasons_.end() ? "manual_preemption" : std::string(kPreemptReasonNames.name(reason->second));
  return preempt(it->second, why, "", hold_for);
}

// ---- submission ----------------------------------------------------------------------

OpResult Scheduler::check_submission(const TaskSpec& spec) const {
  const std::string where = "submit '" + spec.task_id + "': ";
  if (spec.task_id.empty()) return OpResult::fail("submit: the task needs an id");
  if (const Task* existing = task(spec.task_id); existing != nullptr && existing->state == TaskState::kRunning) {
    return OpResult::fail(where + "the task is already running on agent '" + existing->agent + "'");
  }
  if (agents_.pool(spec.pool) == nullptr) return OpResult::fail(where + "no pool '" + spec.pool + "'");
  if (!spec.resources.is_non_negative() || spec.resources.is_zero()) {
    return OpResult::fail(where + "resources must be non-empty and non-negative, got " + spec.resources.to_string());
  }
  return OpResult::ok();
}

Agent* Scheduler::find_idle_agent(const std::string& pool, const ResourceVector& need, const std::string& task_id) {
  Agent* best = nullptr;
  const auto idle = idle_agents_.find(pool);
  if (idle == idle_agents_.end()) return nullptr;
  for (const std::string& name : idle->second) {
    Agent* agent = agents_.agent(name);
    if (!need.fits_in(agent->spec.resources)) continue;
    if (agent->held_for == task_id) return agent;  // held for this very task
    if (agent->held_for.empty() && best == nullptr) best = agent;
  }
  return best;
}

SubmitResult Scheduler::run_on_idle_agent(const TaskSpec& spec, Agent& agent) {
  Task task;
  task.id = spec.task_id;
  task.pool = spec.pool;
  task.priority = spec.priority;
  task.labels = spec.labels;
  task.estimated_duration = spec.estimated_duration;
  task.payload = spec.payload;
  task.checkpoint_interval = spec.checkpoint_interval;
  start_task(std::move(task), agent);
  SubmitResult out;
  out.agent_name = agent.spec.name;
  out.placement_group = agent.placement_group;
  out.pg_reused = true;
  return out;
}

SubmitResult Scheduler::start_on_new_agent(const TaskSpec& spec, std::optional<PgId> preferred_pg) {
  SubmitResult out;
  std::string name = spec.agent_name.empty() ? spec.task_id : spec.agent_name;
  if (agents_.agent(name) != nullptr) name += "#" + std::to_string(next_seq_);
  AgentSpec agent_spec{name, spec.pool, spec.actor_class, spec.resources, std::nullopt, 0};
  PgPool* pool = nullptr;
  if (const auto it = pg_pools_.find(spec.pool); it != pg_pools_.end()) pool = it->second.get();
  if (pool != nullptr) {
    const PgPoolStats before = pool->stats();
    const auto pg = pool->acquire(cluster(), spec.resources, pool->is_high_priority(spec.priority), preferred_pg);
    if (!pg) {
      out.result = OpResult::fail("submit '" + spec.task_id + "': no placement group of pool '" + spec.pool +
                                  "' fits " + spec.resources.to_string());
      return out;
    }
    agent_spec.placement_group = pg;
    out.pg_reused = pool->stats().reuse_hits > before.reuse_hits;
  }
  if (auto created = create_agent(agent_spec); !created) {
    if (pool != nullptr) pool->release(cluster(), *agent_spec.placement_group);
    out.result = OpResult::fail("submit '" + spec.task_id + "': " + created.error);
    return out;
  }
  Agent& agent = *agents_.agent(name);
  agent.dedicated = true;
  SubmitResult started = run_on_idle_agent(spec, agent);
  started.pg_reused = out.pg_reused;
  return started;
}

bool Scheduler::fits_after(const TaskSpec& spec, const std::vector<const Task*>& victims) const {
  ResourceVector available = agents_.pool(spec.pool)->ledger.available();
  std::vector<PgId> pooled_pgs, own_pgs;
  const PgPool* pool = pg_pool(spec.pool);
  for (const Task* victim : victims) {
    const Agent* agent = agents_.agent(victim->agent);
    if (agent == nullptr || !agent->dedicated) continue;
    if (victim->pool == spec.pool) available += agent->spec.resources;
    if (pool != nullptr && pool->holds(agent->placement_group)) {
      pooled_pgs.push_back(agent->placement_group);
    } else if (agent->owns_placement_group) {
      own_pgs.push_back(agent->placement_group);
    }
  }
  if (!spec.resources.fits_in(available)) return false;
  if (pool != nullptr) return pool->can_acquire(cluster(), spec.resources, pool->is_high_priority(spec.priority), pooled_pgs);
  return cluster().can_place({spec.resources}, agents_.pool(spec.pool)->spec.placement_strategy, own_pgs);
}

bool Scheduler::frees_fitting_pg(const Task& victim, const TaskSpec& spec) const {
  const Agent* agent = agents_.agent(victim.agent);
  const PgPool* pool = pg_pool(spec.pool);
  if (agent == nullptr || !agent->dedicated || pool == nullptr) return false;
  const ResourceVector* shape = pool->shape(agent->placement_group);
  return shape != nullptr && spec.resources.fits_in(*shape);
}

std::optional<std::vector<Scheduler::Victim>> Scheduler::choose_victims(const TaskSpec& spec, bool pg_reuse_only) {
  const IncomingTask incoming{spec.priority, spec.pool, spec.labels};
  const bool quota_short = !spec.resources.fits_in(agents_.pool(spec.pool)->ledger.available());
  // Only victims whose preemption gives something back help; when the pool quota binds,
  // only those of the same pool.
  auto helps = [&](const VictimIndex::Class& c) {
    return c.gives_back && (!quota_short || c.pool == spec.pool) && (!pg_reuse_only || c.pool == spec.pool);
  };
  auto task_of = [&](const VictimIndex::Candidate& c) { return &tasks_.at(task_by_seq_.at(c.seq)); };
  auto allowed = [&](const VictimIndex::Candidate& c) { return strategy_->should_preempt(incoming, *task_of(c)); };

  // 1. One victim, if one is enough: in each class the best-scoring victim that frees
  //    enough (looking at most kSingleVictimScan deep); one whose PG the incoming task can
  //    take over wins, then the higher score.
  std::optional<Victim> single;
  bool single_reuses = false;
  const bool pooled = pg_pool(spec.pool) != nullptr;
  for (std::uint32_t id = 0; id < index_.class_count(); ++id) {
    if (!helps(index_.class_of(id))) continue;
    auto cursor = index_.open(incoming, now(), [&](const VictimIndex::Class& c) { return &c == &index_.class_of(id); });
    std::optional<Victim> found;
    bool found_reuses = false;
    for (std::size_t seen = 0; seen < kSingleVictimScan; ++seen) {
      const auto candidate = cursor.next();
      if (!candidate) break;
      if (!allowed(*candidate)) continue;
      const Task* victim = task_of(*candidate);
      if (!fits_after(spec, {victim})) continue;
      const bool reuses = frees_fitting_pg(*victim, spec);
      if (pg_reuse_only && !reuses) continue;
      if (!found) found = Victim{victim, candidate->reason, candidate->score};
      if (reuses) {
        found = Victim{victim, candidate->reason, candidate->score};
        found_reuses = true;
      }
      // Without a PG pool no victim's PG is taken over: the first that fits is the one.
      if (found_reuses || !pooled) break;
    }
    if (!found) continue;
    const bool better = !single || (found_reuses && !single_reuses) ||
                        (found_reuses == single_reuses &&
                         (found->score > single->score || (found->score == single->score && found->task->seq < single->task->seq)));
    if (better) {
      single = found;
      single_reuses = found_reuses;
    }
  }
  if (single) return std::vector<Victim>{*single};
  if (pg_reuse_only) return std::nullopt;

  // 2. Several: take the best-scoring until enough is free, then drop any the others
  //    make unnecessary (lowest score first), so no more are preempted than needed.
  auto cursor = index_.open(incoming, now(), helps);
  std::vector<Victim> chosen;
  std::vector<const Task*> tasks;
  while (!fits_after(spec, tasks)) {
    const auto candidate = cursor.next();
    if (!candidate) return std::nullopt;
    if (!allowed(*candidate)) continue;
    chosen.push_back(Victim{task_of(*candidate), candidate->reason, candidate->score});
    tasks.push_back(chosen.back().task);
  }
  for (std::size_t i = chosen.size(); i-- > 0;) {
    std::vector<const Task*> without = tasks;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (fits_after(spec, without)) {
      tasks = std::move(without);
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return chosen;
}

SubmitResult Scheduler::submit(const TaskSpec& submitted, SubmitResult (Scheduler::*place)(const TaskSpec&)) {
  ScopedLatency latency(metrics_.task_schedule_latency_ms);
  TaskSpec spec = submitted;
  spec.priority = strategy_->priority(submitted);
  if (auto checked = check_submission(spec); !checked) return SubmitResult{checked, {}, {}, {}, false};
  return (this->*place)(spec);
}

SubmitResult Scheduler::submit_task_with_preemption(const TaskSpec& spec) {
  return submit(spec, &Scheduler::place_with_preemption);
}

SubmitResult Scheduler::submit_with_pg_preemption(const TaskSpec& spec) { return submit(spec, &Scheduler::place_with_pg_pool); }

SubmitResult Scheduler::place_with_preemption(const TaskSpec& spec) {
  SubmitResult out;
  if (Agent* idle = find_idle_agent(spec.pool, spec.resources, spec.task_id)) return run_on_idle_agent(spec, *idle);
  if (fits_after(spec, {})) return start_on_new_agent(spec, std::nullopt);

  const auto victims = choose_victims(spec, /*pg_reuse_only=*/false);
  if (!victims) {
    const auto evaluation = index_.evaluate({spec.priority, spec.pool, spec.labels}, now(), 0);
    out.result = OpResult::fail("submit '" + spec.task_id + "': pool '" + spec.pool + "' has " +
                                agents_.pool(spec.pool)->ledger.available().to_string() + " free for " +
                                spec.resources.to_string() + ", and the " + std::to_string(evaluation.eligible) +
                                " tasks the policy lets it preempt do not free enough");
    return out;
  }
  std::optional<PgId> freed_pg;
  std::vector<std::string> preempted;
  for (const Victim& victim : *victims) {
    Task& task = tasks_.at(victim.task->id);
    if (const Agent* agent = agents_.agent(task.agent); agent != nullptr && frees_fitting_pg(task, spec)) {
      freed_pg = agent->placement_group;
    }
    preempted.push_back(task.id);
    (void)preempt(task, std::string(kPreemptReasonNames.name(victim.reason)), spec.task_id, "");
  }
  out = start_on_new_agent(spec, freed_pg);
  out.preempted = std::move(preempted);
  return out;
}

SubmitResult Scheduler::place_with_pg_pool(const TaskSpec& spec) {
  SubmitResult out;
  const PgPool* pool = pg_pool(spec.pool);
  if (pool == nullptr) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': pool '" + spec.pool +
                                "' has no PG pool (pg_pool_config.enable)");
    return out;
  }
  const ResourceVector available = agents_.pool(spec.pool)->ledger.available();
  if (!spec.resources.fits_in(available)) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': pool '" + spec.pool +
                                "' quota is short: needs " + spec.resources.to_string() + ", has " +
                                available.to_string() + " free");
    return out;
  }
  if (pool->can_acquire(cluster(), spec.resources, pool->is_high_priority(spec.priority))) {
    return start_on_new_agent(spec, std::nullopt);
  }
  const auto victims = choose_victims(spec, /*pg_reuse_only=*/true);
  if (!victims) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': no placement group of pool '" +
                                spec.pool + "' is free for " + spec.resources.to_string() +
                                " and no task the policy lets it preempt holds one that fits");
    return out;
  }
  Task& victim = tasks_.at(victims->front().task->id);
  const PgId freed_pg = agents_.agent(victim.agent)->placement_group;
  (void)preempt(victim, std::string(kPreemptReasonNames.name(victims->front().reason)), spec.task_id, "");
  out = start_on_new_agent(spec, freed_pg);
  out.preempted = {victim.id};
  return out;
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

SchedulerState Scheduler::save_state() const {
  SchedulerState state;
  state.saved_at = now();
  state.agents = agents_.state();
  for (const auto& [name, pool] : pg_pools_) state.pg_pools.push_back(pool->state());
  for (const auto& [id, task] : tasks_) state.tasks.push_back(task);
  state.next_seq = next_seq_;
  state.policy = policy_;
  state.stats = stats_;
  state.last_reasons = last_reasons_;
  return state;
}

OpResult Scheduler::load_state(const SchedulerState& state) {
  AgentManager agents;
  if (auto restored = agents.restore(state.agents); !restored) return OpResult::fail("load_state: " + restored.error);
  for (const auto& task : state.tasks) {
    const Agent* agent = agents.agent(task.agent);
    if (task.state == TaskState::kRunning && (agent == nullptr || agent->task != task.id)) {
      return OpResult::fail("load_state: running task '" + task.id + "' is not on its agent '" + task.agent + "'");
    }
  }
  for (const Agent* agent : agents_.list_agents()) {
    if (agent->hold_timer != 0 && timers_ != nullptr) timers_->cancel(agent->hold_timer);
  }
  agents_ = std::move(agents);
  pg_pools_.clear();
  for (const auto& pool : state.pg_pools) pg_pools_[pool.pool] = std::make_unique<PgPool>(pool);
  tasks_.clear();
  task_by_seq_.clear();
  for (const auto& task : state.tasks) tasks_.emplace(task.id, task);
  next_seq_ = state.next_seq;
  policy_ = state.policy;
  stats_ = state.stats;
  last_reasons_ = state.last_reasons;
  idle_agents_.clear();
  for (const Agent* listed : agents_.list_agents()) {
    Agent& agent = *agents_.agent(listed->spec.name);
    agent.hold_timer = 0;
    if (!agent.task) idle_agents_[agent.spec.pool].insert(agent.spec.name);
    if (!agent.held_for.empty()) arm_hold(agent, agent.hold_until);
  }
  set_scheduling_strategy(std::move(strategy_));  // the new cluster takes its node order
  index_ = VictimIndex();
  index_.configure(policy_);
  std::vector<const Task*> running;
  for (const auto& [id, task] : tasks_) {
    if (task.state == TaskState::kRunning) running.push_back(&task);
  }
  std::sort(running.begin(), running.end(), [](const Task* a, const Task* b) { return a->seq < b->seq; });
  for (const Task* task : running) {
    task_by_seq_[task->seq] = task->id;
    index_add(*task);
  }
  return OpResult::ok();
}

void Scheduler::shutdown() {
  std::vector<std::string> names;
  for (const Agent* agent : agents_.list_agents()) names.push_back(agent->spec.name);
  for (const auto& name : names) (void)delete_agent(name, /*force=*/true, /*destroy_pg=*/true);
  for (auto& [name, pool] : pg_pools_) pool->destroy_all(cluster());
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
      if (task_by_seq_.count(task.seq) == 0) problems.push_back("running task " + id + " is not indexed");
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
  return problems;
}

}  // namespace meshsim::scheduler
