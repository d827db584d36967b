// The scheduler's state as a value (SchedulerState): saved, checked against the live
// cluster, and loaded in its place (seed 001's save_state/load_state; the state file's
// codec is tools/cli/state_file).

#include <algorithm>
#include <set>

#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {

SchedulerState Scheduler::save_state() const {
  SchedulerState state;
  state.saved_at = clock_.now();
  state.agents = agents_.state();
  state.pg_pools = pg_pools_.state();
  for (const Task* task : tasks_.by_name()) state.tasks.push_back(*task);
  state.next_seq = tasks_.next_seq();
  state.policy = policy_;
  state.stats = stats_;
  state.last_reasons = last_reasons_;
  state.kept_pgs = pg_pools_.kept();
  return state;
}

namespace {

// What apply_state would silently merge or miss: duplicates that collapse in its maps,
// identifiers the saved counters would hand out again, and a policy that
// update_preemption_policy would refuse.
std::vector<std::string> state_problems(const SchedulerState& state) {
  std::vector<std::string> problems;
  std::set<std::string> task_ids;
  std::set<std::uint64_t> running_seqs;
  for (const auto& task : state.tasks) {
    if (!task_ids.insert(task.id).second) problems.push_back("task " + task.id + " appears twice");
    if (task.seq >= state.next_seq) {
      problems.push_back("task " + task.id + " has seq " + std::to_string(task.seq) + ", not below next_task_seq " +
                         std::to_string(state.next_seq));
    }
    if (task.state == TaskState::kRunning && !running_seqs.insert(task.seq).second) {
      problems.push_back("running task " + task.id + " shares seq " + std::to_string(task.seq) + " with another");
    }
  }
  std::set<std::string> agent_names;
  for (const auto& agent : state.agents.agents) {
    if (!agent_names.insert(agent.spec.name).second) problems.push_back("agent " + agent.spec.name + " appears twice");
    // Times the state saw happen cannot lie after it was saved.
    if (agent.last_heartbeat > state.saved_at) {
      problems.push_back("agent " + agent.spec.name + "'s last heartbeat is after saved_at");
    }
  }
  for (const auto& task : state.tasks) {
    if (task.start_time > state.saved_at) problems.push_back("task " + task.id + " starts after saved_at");
  }
  std::set<std::string> names;
  for (const auto& [spec, node_state] : state.agents.cluster.nodes) {
    if (!names.insert(spec.name).second) problems.push_back("node " + spec.name + " appears twice");
  }
  names.clear();
  for (const auto& pool : state.agents.pools) {
    if (!names.insert(pool.name).second) problems.push_back("pool " + pool.name + " appears twice");
  }
  for (const auto& [id, pg] : state.agents.cluster.placement_groups) {
    if (id >= state.agents.cluster.next_pg) {
      problems.push_back("placement group " + std::to_string(id) + " is not below next_placement_group " +
                         std::to_string(state.agents.cluster.next_pg));
    }
  }
  PreemptionPolicy fresh;
  if (auto checked = update_policy(fresh, as_update(state.policy)); !checked.result) {
    problems.push_back(checked.result.error);
  }
  return problems;
}

}  // namespace

OpResult Scheduler::check_state(const SchedulerState& state) const {
  std::vector<std::string> problems = state_problems(state);
  if (problems.empty()) {
    // Loaded on a scratch core at the state's own time: its checker sees what the state
    // would become.
    struct SavedClock final : Clock {
      SimTime at;
      explicit SavedClock(SimTime t) : at(t) {}
      SimTime now() const override { return at; }
    } saved_clock(state.saved_at);
    Scheduler scratch(saved_clock);
    if (auto applied = scratch.apply_state(state); !applied) return applied;
    problems = scratch.check_invariants();
  }
  if (problems.empty()) return OpResult::ok();
  std::string message = "load_state: the state does not check:";
  for (std::size_t i = 0; i < problems.size() && i < 5; ++i) message += (i == 0 ? " " : "; ") + problems[i];
  if (problems.size() > 5) message += "; and " + std::to_string(problems.size() - 5) + " more";
  return OpResult::fail(message);
}

OpResult Scheduler::load_state(const SchedulerState& state) {
  if (auto checked = check_state(state); !checked) return checked;
  return apply_state(state);
}

OpResult Scheduler::apply_state(const SchedulerState& state) {
  AgentManager agents;
  if (auto restored = agents.restore(state.agents); !restored) return OpResult::fail("load_state: " + restored.error);
  for (const auto& task : state.tasks) {
    const Agent* agent = agents.agent(task.agent);
    if (task.state == TaskState::kRunning && (agent == nullptr || agent->task != task.id)) {
      return OpResult::fail("load_state: running task '" + task.id + "' is not on its agent '" + task.agent + "'");
    }
  }
  for (const Agent* listed : agents_.list_agents()) holds_.end(*agents_.agent(listed->id));
  agents_ = std::move(agents);
  pg_pools_.restore(state.pg_pools, state.kept_pgs);
  tasks_.restore(state.tasks, state.next_seq);
  policy_ = state.policy;
  stats_ = state.stats;
  last_reasons_ = state.last_reasons;
  for (const Agent* listed : agents_.list_agents()) {
    Agent& agent = *agents_.agent(listed->id);
    agent.hold_timer = 0;
    if (!agent.held_for.empty()) holds_.arm(agent, agent.hold_until);
  }
  set_scheduling_strategy(std::move(strategy_));  // the new cluster takes its node order
  index_ = VictimIndex();
  index_.configure(policy_);
  std::vector<Task*> running;
  for (const auto& [seq, task] : tasks_.running()) running.push_back(task);
  std::sort(running.begin(), running.end(), [](const Task* a, const Task* b) { return a->seq < b->seq; });
  for (Task* task : running) {
    const Agent& agent = *agents_.agent(task->agent);
    task->agent_id = agent.id;
    task->actor_class = agent.spec.kind;
    index_.add(victim_info(*task, agents_), clock_.now().seconds());
  }
  return OpResult::ok();
}

}  // namespace meshsim::scheduler
