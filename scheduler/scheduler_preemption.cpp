// Scheduler's preemption and submission paths (the rest of Scheduler is in
// scheduler.cpp): evaluation, execution, holds and the two submit paths (victim
// selection is victim_search.cpp's).
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
  const auto evaluation = index_.evaluate(incoming, clock_.now().seconds(), k);
  out.eligible = evaluation.eligible;
  out.should_preempt = evaluation.eligible > 0;
  last_reasons_.clear();
  for (const auto& candidate : evaluation.best) {
    const Task& task = tasks_.running(candidate.seq);
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
  const SimTime at = clock_.now();
  // 1. Save the state: the pool's preserver, else the snapshot itself. It is kept on the
  //    task; execute_preemption hands a copy to its caller.
  SavedState snapshot;
  static_cast<TaskTraits&>(snapshot) = victim;
  snapshot.task_id = victim.id;
  snapshot.pool_name = victim.pool;
  snapshot.agent_name = victim.agent;
  snapshot.elapsed = victim.elapsed(at);
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
  const SimTime timeout = SimTime::from_seconds_up(policy_.cancel_timeout);
  if (actuator_ != nullptr) reply = actuator_->cancel_task(victim, timeout);
  out.cancel_success = reply.answered;
  out.cancel_wait = std::min(reply.waited, timeout);
  if (reply.wait_ahead) out.stops_in = out.cancel_wait;
  // 3. Free the slot (or hold it for the named preemptor).
  Agent* agent = agents_.agent(victim.agent_id);
  if (agent != nullptr && !hold_for.empty()) {
    agent->held_for = hold_for;
    holds_.arm(*agent, at + SimTime::from_seconds_up(policy_.hold_timeout));
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

PreemptionOutcome Scheduler::execute_preemption(const std::string& task_id, const std::string& agent_name,
                                                const std::string& hold_for) {
  Task* task = tasks_.find(task_id);
  if (task == nullptr || task->state != TaskState::kRunning) {
    PreemptionOutcome out;
    out.result = OpResult::fail("execute_preemption: no running task '" + task_id + "'");
    return out;
  }
  if (task->agent != agent_name) {
    PreemptionOutcome out;
    out.result = OpResult::fail("execute_preemption: task '" + task_id + "' runs on agent '" + task->agent + "', not '" +
                                agent_name + "'");
    return out;
  }
  const auto reason = last_reasons_.find(task_id);
  auto out = preempt(*task, reason == last_reasons_.end() ? std::nullopt : std::optional(reason->second), "", hold_for);
  out.saved_state = task->saved_state;
  return out;
}

// ---- submission ----------------------------------------------------------------------

namespace {

OpResult check_submission(const TaskSpec& spec, const TaskTable& tasks, const AgentManager& agents) {
  const auto where = [&] { return "submit '" + spec.task_id + "': "; };
  if (spec.task_id.empty()) return OpResult::fail("submit: the task needs an id");
  if (const Task* existing = tasks.find(spec.task_id); existing != nullptr && existing->state == TaskState::kRunning) {
    return OpResult::fail(where() + "the task is already running on agent '" + existing->agent + "'");
  }
  if (agents.pool(spec.pool) == nullptr) return OpResult::fail(where() + "no pool '" + spec.pool + "'");
  if (!spec.resources.is_non_negative() || spec.resources.is_zero()) {
    return OpResult::fail(where() + "resources must be non-empty and non-negative, got " + spec.resources.to_string());
  }
  return OpResult::ok();
}

}  // namespace

SubmitResult Scheduler::start_on_agent(const TaskSpec& spec, Agent* idle, std::optional<PgId> preferred_pg) {
  SubmitResult out;
  out.pg_reused = true;  // an idle agent's PG served before
  if (idle == nullptr) {
    std::string name = spec.agent_name.empty() ? spec.task_id : spec.agent_name;
    if (agents_.agent(name) != nullptr) name += "#" + std::to_string(tasks_.next_seq());
    AgentSpec agent_spec{name, spec.pool, spec.actor_class, spec.resources, std::nullopt, 0};
    PgPool* pool = pg_pools_.find(spec.pool);
    out.pg_reused = false;
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
    if (auto created = agents_.create_agent(agent_spec, spec.task_id); !created) {
      if (pool != nullptr) pool->release(cluster(), *agent_spec.placement_group);
      out.result = OpResult::fail("submit '" + spec.task_id + "': " + created.error);
      return out;
    }
    idle = agents_.agent(name);
    idle->last_heartbeat = clock_.now();
    idle->dedicated = true;
  }
  Task task;
  static_cast<TaskTraits&>(task) = spec;
  task.id = spec.task_id;
  task.pool = spec.pool;
  out.task = start_task(std::move(task), *idle).handle;
  out.agent_name = idle->spec.name;
  out.agent = idle->id;
  out.node = idle->node;
  out.placement_group = idle->placement_group;
  return out;
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
  if (auto checked = check_submission(spec, tasks_, agents_); !checked) {
    SubmitResult refused;
    refused.result = checked;
    return refused;
  }
  return (this->*place)(spec);
}

SubmitResult Scheduler::submit_task_with_preemption(const TaskSpec& spec) {
  return submit(spec, &Scheduler::place_with_preemption);
}

SubmitResult Scheduler::submit_with_pg_preemption(const TaskSpec& spec) { return submit(spec, &Scheduler::place_with_pg_pool); }

SubmitResult Scheduler::place_with_preemption(const TaskSpec& spec) {
  SubmitResult out;
  if (Agent* idle = agents_.find_idle(spec.pool, spec.resources, spec.task_id)) {
    return start_on_agent(spec, idle, std::nullopt);
  }
  VictimSearch search(agents_, pg_pools_, index_, tasks_.running(), *strategy_, clock_.now().seconds());
  if (search.fits_after(spec, {})) return start_on_agent(spec, nullptr, std::nullopt);

  std::size_t considered = 0;
  const auto victims = search.choose(spec, /*pg_reuse_only=*/false, &considered);
  if (!victims) {
    // Built in one string: shared clusters are refused thousands of times a run.
    std::string& message = out.result.error;
    message.reserve(200 + spec.task_id.size() + spec.pool.size());
    message.append("submit '").append(spec.task_id).append("': pool '").append(spec.pool).append("' has ");
    agents_.pool(spec.pool)->ledger.available().append_to(message);
    message += " free for ";
    spec.resources.append_to(message);
    message.append(", and the ").append(std::to_string(considered));
    message += " tasks the policy lets it preempt do not free enough";
    out.result.success = false;
    return out;
  }
  std::optional<PgId> freed_pg;
  std::vector<TaskId> preempted;
  SimTime ready_in;
  for (const VictimSearch::Victim& victim : *victims) {
    Task& task = tasks_.running(victim.task->seq);
    if (const Agent* agent = agents_.agent(task.agent_id); agent != nullptr && search.frees_fitting_pg(task, spec)) {
      freed_pg = agent->placement_group;
    }
    preempted.push_back(task.handle);
    ready_in = std::max(ready_in, preempt(task, victim.reason, spec.task_id, "").stops_in);
  }
  out = start_on_agent(spec, nullptr, freed_pg);
  out.preempted = std::move(preempted);
  if (out.result.success) out.ready_in = ready_in;
  return out;
}

SubmitResult Scheduler::place_with_pg_pool(const TaskSpec& spec) {
  SubmitResult out;
  const PgPool* pool = pg_pools_.find(spec.pool);
  if (pool == nullptr) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': pool '" + spec.pool +
                                "' has no PG pool (pg_pool_config.enable)");
    return out;
  }
  const ResourceVector& available = agents_.pool(spec.pool)->ledger.available();
  if (!spec.resources.fits_in(available)) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': pool '" + spec.pool +
                                "' quota is short: needs " + spec.resources.to_string() + ", has " +
                                available.to_string() + " free");
    return out;
  }
  if (pool->can_acquire(cluster(), spec.resources, pool->is_high_priority(spec.priority))) {
    return start_on_agent(spec, nullptr, std::nullopt);
  }
  const auto victims = VictimSearch(agents_, pg_pools_, index_, tasks_.running(), *strategy_, clock_.now().seconds())
                           .choose(spec, /*pg_reuse_only=*/true);
  if (!victims) {
    out.result = OpResult::fail("submit_with_pg_preemption '" + spec.task_id + "': no placement group of pool '" +
                                spec.pool + "' is free for " + spec.resources.to_string() +
                                " and no task the policy lets it preempt holds one that fits");
    return out;
  }
  Task& victim = tasks_.running(victims->front().task->seq);
  const PgId freed_pg = agents_.agent(victim.agent_id)->placement_group;
  const SimTime ready_in = preempt(victim, victims->front().reason, spec.task_id, "").stops_in;
  out = start_on_agent(spec, nullptr, freed_pg);
  out.preempted = {victim.handle};
  if (out.result.success) out.ready_in = ready_in;
  return out;
}

}  // namespace meshsim::scheduler
