// Scheduler's preemption and submission paths (the rest of Scheduler is in
// scheduler.cpp): evaluation, execution, holds, victim selection, the two submit paths.
#include <algorithm>

#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {

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
    const Task& task = *task_by_seq_.at(candidate.seq);
    out.candidates.push_back(
        PreemptionCandidate{task.id, task.agent, task.pool, task.priority, candidate.score, candidate.reason});
    last_reasons_[task.id] = candidate.reason;
  }
  return out;
}

PreemptionOutcome Scheduler::preempt(Task& victim, std::optional<PreemptReason> why, const std::string& preemptor,
                                     const std::string& hold_for) {
  ScopedLatency latency(metrics_.preemption_execution_latency_ms);
  const std::string_view reason = why ? kPreemptReasonNames.name(*why) : "manual_preemption";
  metrics_.count_preemption(victim.pool, reason);
  PreemptionOutcome out;
  const double at = now();
  // 1. Save the state: the pool's preserver, else the snapshot itself. It is kept on the
  //    task; execute_preemption hands a copy to its caller.
  SavedState snapshot;
  static_cast<TaskTraits&>(snapshot) = victim;
  snapshot.task_id = victim.id;
  snapshot.pool_name = victim.pool;
  snapshot.agent_name = victim.agent;
  snapshot.elapsed = std::max(0.0, at - victim.start_time);
  bool saved = true;
  if (const auto h = handlers_.find(victim.pool); h != handlers_.end() && h->second.preserver) {
    auto preserved = h->second.preserver(snapshot);
    if (preserved) {
      snapshot.custom = std::move(*preserved);
    } else {
      saved = false;
      out.state_error = "preserver for pool '" + victim.pool + "' failed: " + preserved.error().message;
    }
  }
  // 2. Cancel, waiting at most cancel_timeout; an agent that does not answer is killed.
  //    A wait ahead on a simulated clock does not keep the slot from the preemptor: it
  //    holds the freed room from now and starts when the agent stops (stops_in).
  CancelReply reply;
  if (actuator_ != nullptr) reply = actuator_->cancel_task(victim.agent, victim.id, policy_.cancel_timeout);
  out.cancel_success = reply.answered;
  out.cancel_wait = std::min(reply.waited_s, policy_.cancel_timeout);
  if (reply.wait_ahead) out.stops_in = out.cancel_wait;
  // 3. Free the slot (or hold it for the named preemptor).
  Agent* agent = agents_.agent(victim.agent_id);
  if (agent != nullptr && !hold_for.empty()) {
    agent->held_for = hold_for;
    arm_hold(*agent, at + policy_.hold_timeout);
  }
  end_task(victim, saved ? TaskState::kPreempted : TaskState::kLost);
  if (saved) {
    victim.saved_state.emplace(std::move(snapshot));
  } else {
    victim.saved_state.reset();
  }
  // 4. Count it.
  ++stats_.total_preemptions;
  if (!why) {
    ++stats_.manual_preemptions;
  } else if (*why == PreemptReason::kSamePool) {
    ++stats_.same_pool_preemptions;
  } else if (*why == PreemptReason::kCrossPool) {
    ++stats_.cross_pool_preemptions;
  } else {
    ++stats_.label_preemptions;
  }
  stats_.recent_preemptions.push_front(
      PreemptionRecord{at, victim.id, victim.pool, victim.priority, std::string(reason), victim.lost_work, preemptor});
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
  auto out = preempt(it->second, reason == last_reasons_.end() ? std::nullopt : std::optional(reason->second), "", hold_for);
  out.saved_state = it->second.saved_state;
  return out;
}

// ---- submission ----------------------------------------------------------------------

OpResult Scheduler::check_submission(const TaskSpec& spec) const {
  const auto where = [&] { return "submit '" + spec.task_id + "': "; };
  if (spec.task_id.empty()) return OpResult::fail("submit: the task needs an id");
  if (const Task* existing = task(spec.task_id); existing != nullptr && existing->state == TaskState::kRunning) {
    return OpResult::fail(where() + "the task is already running on agent '" + existing->agent + "'");
  }
  if (agents_.pool(spec.pool) == nullptr) return OpResult::fail(where() + "no pool '" + spec.pool + "'");
  if (!spec.resources.is_non_negative() || spec.resources.is_zero()) {
    return OpResult::fail(where() + "resources must be non-empty and non-negative, got " + spec.resources.to_string());
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
  static_cast<TaskTraits&>(task) = spec;
  task.id = spec.task_id;
  task.pool = spec.pool;
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
  // Not through create_agent: the agent takes its task at once, never listed idle.
  if (auto created = agents_.create_agent(agent_spec); !created) {
    if (pool != nullptr) pool->release(cluster(), *agent_spec.placement_group);
    out.result = OpResult::fail("submit '" + spec.task_id + "': " + created.error);
    return out;
  }
  Agent& agent = *agents_.agent(name);
  agent.last_heartbeat = now();
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
    const Agent* agent = agents_.agent(victim->agent_id);
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
  const Agent* agent = agents_.agent(victim.agent_id);
  const PgPool* pool = pg_pool(spec.pool);
  if (agent == nullptr || !agent->dedicated || pool == nullptr) return false;
  const ResourceVector* shape = pool->shape(agent->placement_group);
  return shape != nullptr && spec.resources.fits_in(*shape);
}

// The room preempting a set of victims frees for `spec`, in a pool without a PG pool:
// its quota plus what same-pool victims give back, and per node the bundles of the
// victims' own placement groups. fits() is fits_after(spec, victims), kept up to date as
// victims are added and removed: each touches only its own nodes, so growing a set of n
// victims and then dropping the unnecessary ones costs O(n), not O(n^2).
class Scheduler::FreedRoom {
 public:
  FreedRoom(const Scheduler& core, const TaskSpec& spec)
      : core_(core), spec_(spec), quota_(core.agents_.pool(spec.pool)->ledger.available()) {
    fits_now_ = core.cluster().can_place({spec.resources}, core.agents_.pool(spec.pool)->spec.placement_strategy);
  }
  void add(const Task& victim) { change(victim, /*adding=*/true); }
  void remove(const Task& victim) { change(victim, /*adding=*/false); }
  // fits() after add(victim), for one victim on top of what was added, without copying.
  bool fits_with(const Task& victim) const {
    const Agent* agent = core_.agents_.agent(victim.agent_id);
    if (agent == nullptr || !agent->dedicated) return fits();
    if (!spec_.resources.fits_in(victim.pool == spec_.pool ? quota_ + agent->spec.resources : quota_)) return false;
    if (fits_now_ || fitting_nodes_ > 0) return true;
    if (!agent->owns_placement_group) return false;
    const PlacementGroup* pg = core_.cluster().placement_group(agent->placement_group);
    if (pg == nullptr || pg->state != PgState::kReady) return false;
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      ResourceVector freed = pg->bundles[b];
      if (const auto* already = freed_on(pg->nodes[b])) freed += *already;
      // Bundles of one PG on the same node free together.
      for (std::size_t other = 0; other < pg->bundles.size(); ++other) {
        if (other != b && pg->nodes[other] == pg->nodes[b]) freed += pg->bundles[other];
      }
      if (node_fits(pg->nodes[b], freed)) return true;
    }
    return false;
  }
  // Some node holds the spec with no victim (only the quota can stand in the way).
  bool fits_now() const { return fits_now_; }
  bool fits() const { return spec_.resources.fits_in(quota_) && (fits_now_ || fitting_nodes_ > 0); }

 private:
  void change(const Task& victim, bool adding) {
    const Agent* agent = core_.agents_.agent(victim.agent_id);
    if (agent == nullptr || !agent->dedicated) return;
    if (victim.pool == spec_.pool) adding ? quota_ += agent->spec.resources : quota_ -= agent->spec.resources;
    if (!agent->owns_placement_group) return;
    const PlacementGroup* pg = core_.cluster().placement_group(agent->placement_group);
    if (pg == nullptr || pg->state != PgState::kReady) return;
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      const auto node = pg->nodes[b];
      auto it = std::find_if(freed_.begin(), freed_.end(), [&](const auto& entry) { return entry.first == node; });
      if (it == freed_.end()) it = freed_.emplace(freed_.end(), node, ResourceVector{});
      const bool fitted = node_fits(node, it->second);
      adding ? it->second += pg->bundles[b] : it->second -= pg->bundles[b];
      fitting_nodes_ += static_cast<int>(node_fits(node, it->second)) - static_cast<int>(fitted);
    }
  }
  const ResourceVector* freed_on(std::uint32_t node) const {
    const auto it = std::find_if(freed_.begin(), freed_.end(), [&](const auto& entry) { return entry.first == node; });
    return it == freed_.end() ? nullptr : &it->second;
  }
  bool node_fits(std::uint32_t index, const ResourceVector& freed) const {
    const Node& node = core_.cluster().nodes()[index];
    return node.state == NodeState::kUp && spec_.resources.fits_in_sum(node.ledger.available(), freed);
  }

  const Scheduler& core_;
  const TaskSpec& spec_;
  ResourceVector quota_;
  bool fits_now_ = false;
  std::vector<std::pair<std::uint32_t, ResourceVector>> freed_;  // by node, in the order first touched
  int fitting_nodes_ = 0;  // nodes in freed_ that hold the spec with what is freed there
};

std::optional<std::vector<Scheduler::Victim>> Scheduler::choose_victims(const TaskSpec& spec, bool pg_reuse_only,
                                                                        std::size_t* considered) {
  const IncomingTask incoming{spec.priority, spec.pool, spec.labels};
  const bool quota_short = !spec.resources.fits_in(agents_.pool(spec.pool)->ledger.available());
  // Only victims whose preemption gives something back help; when the pool quota binds,
  // only those of the same pool.
  auto helps = [&](const VictimIndex::Class& c) {
    return c.gives_back && (!quota_short || c.pool == spec.pool) && (!pg_reuse_only || c.pool == spec.pool);
  };
  auto task_of = [&](const VictimIndex::Candidate& c) -> const Task* { return task_by_seq_.at(c.seq); };
  auto allowed = [&](const VictimIndex::Candidate& c) { return strategy_->should_preempt(incoming, *task_of(c)); };

  // 1. One victim, if one is enough: in each class the best-scoring victim that frees
  //    enough (looking at most kSingleVictimScan deep); one whose PG the incoming task can
  //    take over wins, then the higher score.
  std::optional<Victim> single;
  bool single_reuses = false;
  const bool pooled = pg_pool(spec.pool) != nullptr;
  std::optional<FreedRoom> base;  // without a PG pool: the room with no victim yet
  if (!pooled) base.emplace(*this, spec);
  // A lone victim frees at most its class's largest GPU share on one node: when even the
  // node with the most free GPUs could not hold the task with that, the class has no
  // single victim to offer and its scan (kSingleVictimScan deep) is skipped.
  const bool nodes_short = base && !base->fits_now();
  const std::int64_t most_free_gpu = cluster().most_free_gpu_milli();
  for (std::uint32_t id = 0; id < index_.class_count(); ++id) {
    const VictimIndex::Class& c = index_.class_of(id);
    if (!helps(c)) continue;
    if (nodes_short && spec.resources.gpu_milli() > most_free_gpu + c.most_gpu_freed_on_a_node_milli) continue;
    auto cursor = index_.open(incoming, now(), [&](const VictimIndex::Class& other) { return &other == &c; });
    std::optional<Victim> found;
    bool found_reuses = false;
    for (std::size_t seen = 0; seen < kSingleVictimScan; ++seen) {
      const auto candidate = cursor.next();
      if (!candidate) break;
      if (!allowed(*candidate)) continue;
      const Task* victim = task_of(*candidate);
      if (base) {
        if (!base->fits_with(*victim)) continue;
      } else if (!fits_after(spec, {victim})) {
        continue;
      }
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
  //    Without a PG pool the room they free is kept up to date victim by victim (a
  //    failing search, the common case for queued work, then costs one pass).
  auto cursor = index_.open(incoming, now(), helps);
  std::vector<Victim> chosen;
  std::vector<const Task*> tasks;
  std::optional<FreedRoom> room = base;
  const auto enough = [&] { return room ? room->fits() : fits_after(spec, tasks); };
  std::size_t seen = 0;
  while (!enough()) {
    const auto candidate = cursor.next();
    if (!candidate) {
      if (considered != nullptr) *considered = seen;
      return std::nullopt;
    }
    if (!allowed(*candidate)) continue;
    ++seen;
    chosen.push_back(Victim{task_of(*candidate), candidate->reason, candidate->score});
    tasks.push_back(chosen.back().task);
    if (room) room->add(*chosen.back().task);
  }
  // Lowest score first: drop each victim the others make unnecessary.
  for (std::size_t i = chosen.size(); i-- > 0;) {
    bool unnecessary = false;
    if (room) {
      room->remove(*tasks[i]);
      unnecessary = room->fits();
      if (!unnecessary) room->add(*tasks[i]);
    } else {
      std::vector<const Task*> without = tasks;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      unnecessary = fits_after(spec, without);
    }
    if (unnecessary) {
      tasks.erase(tasks.begin() + static_cast<std::ptrdiff_t>(i));
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return chosen;
}

SubmitResult Scheduler::submit(const TaskSpec& submitted, SubmitResult (Scheduler::*place)(const TaskSpec&)) {
  ScopedLatency latency(metrics_.task_schedule_latency_ms);
  // A copy only when the strategy changes the priority (the spec carries labels and a payload).
  const double priority = strategy_->priority(submitted);
  std::optional<TaskSpec> reprioritised;
  if (priority != submitted.priority) {
    reprioritised = submitted;
    reprioritised->priority = priority;
  }
  const TaskSpec& spec = reprioritised ? *reprioritised : submitted;
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

  std::size_t considered = 0;
  const auto victims = choose_victims(spec, /*pg_reuse_only=*/false, &considered);
  if (!victims) {
    out.result = OpResult::fail("submit '" + spec.task_id + "': pool '" + spec.pool + "' has " +
                                agents_.pool(spec.pool)->ledger.available().to_string() + " free for " +
                                spec.resources.to_string() + ", and the " + std::to_string(considered) +
                                " tasks the policy lets it preempt do not free enough");
    return out;
  }
  std::optional<PgId> freed_pg;
  std::vector<std::string> preempted;
  double ready_in = 0.0;
  for (const Victim& victim : *victims) {
    Task& task = *task_by_seq_.at(victim.task->seq);
    if (const Agent* agent = agents_.agent(task.agent_id); agent != nullptr && frees_fitting_pg(task, spec)) {
      freed_pg = agent->placement_group;
    }
    preempted.push_back(task.id);
    ready_in = std::max(ready_in, preempt(task, victim.reason, spec.task_id, "").stops_in);
  }
  out = start_on_new_agent(spec, freed_pg);
  out.preempted = std::move(preempted);
  if (out.result.success) out.ready_in = ready_in;
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
  const PgId freed_pg = agents_.agent(victim.agent_id)->placement_group;
  const double ready_in = preempt(victim, victims->front().reason, spec.task_id, "").stops_in;
  out = start_on_new_agent(spec, freed_pg);
  out.preempted = {victim.id};
  if (out.result.success) out.ready_in = ready_in;
  return out;
}

}  // namespace meshsim::scheduler
