#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/agent_manager.hpp"
#include "scheduler/capacity_holds.hpp"
#include "scheduler/pg_pools.hpp"
#include "scheduler/preemption_policy.hpp"
#include "scheduler/scheduler_metrics.hpp"
#include "scheduler/scheduling_strategy.hpp"
#include "scheduler/task.hpp"
#include "scheduler/task_table.hpp"
#include "scheduler/victim_index.hpp"
#include "scheduler/victim_search.hpp"
#include "scheduler/world.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::scheduler {

// A pool's state handlers (seed 001 section 7): the preserver turns a preempted task's
// snapshot into the state to keep; the restorer brings it back.
using StatePreserver = std::function<Expected<std::string>(const SavedState&)>;
using StateRestorer = std::function<Status(const SavedState&)>;

struct PreemptionCandidate {
  std::string task_id;
  std::string agent_name;
  std::string pool_name;
  double priority = 0.0;
  double preempt_score = 0.0;
  PreemptReason reason = PreemptReason::kSamePool;
};

struct PreemptionEvaluation {
  bool should_preempt = false;
  std::vector<PreemptionCandidate> candidates;  // best first, at most k
  std::size_t eligible = 0;                     // all tasks that could be preempted
};

struct PreemptionOutcome {
  OpResult result;
  bool cancel_success = false;  // the agent answered the cancel within cancel_timeout
  SimTime cancel_wait = SimTime::zero();  // how long the agent took to stop
  // How long from now until the agent stops: cancel_wait when that wait lies ahead on a
  // simulated clock (two-phase preemption), zero when it passed inside the call.
  SimTime stops_in = SimTime::zero();
  std::optional<SavedState> saved_state;
  std::string state_error;  // the preserver failed: the task is lost, its work counted
};

struct SubmitResult {
  OpResult result;
  // Where the task runs (when it does): its id, its agent and the agent's node.
  TaskId task = kNoTask;
  std::string agent_name;
  AgentId agent = kNoAgent;
  std::uint32_t node = 0;
  // The victims' ids, in the order they were preempted (the core holds them, preempted
  // or lost: tasks().find(id) names them).
  std::vector<TaskId> preempted;
  std::optional<PgId> placement_group;
  bool pg_reused = false;  // the PG was one a victim or an earlier task had used
  // How long from now until every victim's agent has stopped: the task holds its
  // resources from now but can begin work only then (zero when no wait lies ahead).
  SimTime ready_in = SimTime::zero();
};

// One preemption, for recent_preemptions.
struct PreemptionRecord {
  SimTime timestamp = SimTime::zero();
  std::string task_id;
  std::string pool_name;
  double priority = 0.0;
  std::string reason;  // a PreemptReason name, or "manual_preemption"
  double lost_work = 0.0;
  std::string preemptor;  // empty for a manual execute_preemption
};

struct PreemptionStats {
  std::uint64_t total_preemptions = 0, same_pool_preemptions = 0, cross_pool_preemptions = 0,
                label_preemptions = 0, manual_preemptions = 0;
  std::size_t running_tasks = 0;
  std::uint64_t restored_tasks = 0, requeued_tasks = 0, lost_tasks = 0;
  // Completed tasks leave the core's tables (memory does not grow with job churn): they
  // are counted here.
  std::uint64_t completed_tasks = 0;
  double lost_work = 0.0;  // seconds, over all preemptions and failures
  std::deque<PreemptionRecord> recent_preemptions;  // newest first
};

// summarize(): what the core holds, per pool and overall.
struct PoolStats {
  ResourceVector capacity, used, available;
  std::size_t agents = 0, running_tasks = 0;
};
struct SchedulerStats {
  std::map<std::string, PoolStats> pools;
  std::size_t nodes = 0, placement_groups = 0;
  ResourceVector node_capacity, node_used;
  std::map<std::string, std::size_t> tasks;  // by state name
};

// The scheduler's whole state (seed 002's state_path): written to a state file and read
// back to resume, checkpoint or fork a run. State handlers are functions and stay with
// the Scheduler that loads it.
struct SchedulerState {
  SimTime saved_at = SimTime::zero();  // the clock when saved: a world resuming from it sets its clock here
  AgentManager::State agents;
  std::vector<PgPool::State> pg_pools;
  std::vector<Task> tasks;
  std::uint64_t next_seq = 1;
  PreemptionPolicy policy;
  PreemptionStats stats;
  std::map<std::string, PreemptReason> last_reasons;
  std::map<PgId, std::string> kept_pgs;  // kept by delete_agent(destroy_pg=false), by pool
};

// The fine-grained scheduling core (the seeds' RayScheduler): pools, agents, placement
// groups and their PG pools, tasks, preemption. It sees time through `clock`, cancels
// through `actuator` and expires holds through `timers` (both optional: without an
// actuator every cancel is answered at once; without timers holds never expire).
// Every call that fails changes nothing.
class Scheduler {
 public:
  static constexpr std::size_t kDefaultCandidates = 16;
  static constexpr std::size_t kRecentPreemptions = 100;

  explicit Scheduler(const Clock& clock, Actuator* actuator = nullptr, TimerService* timers = nullptr);

  ClusterState& cluster() { return agents_.cluster(); }
  const ClusterState& cluster() const { return agents_.cluster(); }
  // Pools and agents (list_agents, agent by name or id).
  const AgentManager& agents() const { return agents_; }

  // The scheduling strategy plugin (default "binpack"): node choice, task priority, a
  // veto over preemptions.
  void set_scheduling_strategy(std::unique_ptr<SchedulingStrategy> strategy);
  const SchedulingStrategy& scheduling_strategy() const { return *strategy_; }

  // Pools. A PG pool config with `enable` reserves its high-priority PGs at once.
  OpResult create_pool(PoolSpec spec, PgPoolConfig pg_pool = {});
  OpResult ensure_pool(PoolSpec spec, std::optional<PgPoolConfig> pg_pool = std::nullopt);
  // The PG pools (their stats: seed 001's pg_pool_stats) and the kept placement groups.
  const PgPools& pg_pools() const { return pg_pools_; }

  OpResult create_agent(AgentSpec spec);
  // With force, a running task on the agent is reported lost (its work counted).
  // Without destroy_pg the agent's placement group is kept (pg_pools().kept()): it holds
  // its node resources until shutdown; a PG pool's PG goes back to its PG pool.
  OpResult delete_agent(const std::string& name, bool force = false, bool destroy_pg = true);
  void record_heartbeat(const std::string& agent_name);
  // Agents whose last heartbeat is older than `timeout` are removed and created
  // again (same spec, a new PG, idle); a task they ran is requeued, its work since the
  // last checkpoint counted as lost.
  struct HealthReport {
    std::vector<std::string> recreated_agents;
    std::vector<std::string> requeued_tasks;
    std::vector<std::string> errors;  // agents that could not be created again
  };
  HealthReport ensure_agent_health(SimTime timeout);

  // Tasks.
  OpResult register_running_task(const RunningTaskSpec& spec);
  // The task finished: its dedicated agent goes (its PG back to the PG pool). By name
  // (the API's edge) or by the id a submit returned.
  OpResult complete(const std::string& task_id);
  OpResult complete(TaskId task);
  // Every task the core holds, by id (tasks().find(id)), and the running ones.
  const TaskTable& tasks() const { return tasks_; }

  // Preemption.
  PolicyUpdateResult update_preemption_policy(const PolicyUpdate& update);
  const PreemptionPolicy& policy() const { return policy_; }
  PreemptionEvaluation evaluate_preemption(const IncomingTask& incoming, std::size_t k = kDefaultCandidates);
  // Saves the victim's state, cancels it (waiting at most cancel_timeout) and frees its
  // slot. With `hold_for`, the freed agent stays idle, held for that preemptor until it
  // is submitted or hold_timeout passes.
  PreemptionOutcome execute_preemption(const std::string& task_id, const std::string& agent_name,
                                       const std::string& hold_for = "");
  // Resource check, preemption of the fewest victims that free enough, agent creation.
  SubmitResult submit_task_with_preemption(const TaskSpec& spec);
  // The PG-pool path: a reserved PG for high-priority work, a dynamic one otherwise, or
  // one a lower-priority task holds (PG preemption). Fails with no side effects when the
  // pool quota is short; the caller may fall back to submit_task_with_preemption.
  SubmitResult submit_with_pg_preemption(const TaskSpec& spec);

  void register_state_handlers(const std::string& pool, StatePreserver preserver, StateRestorer restorer);
  OpResult restore_task(const SavedState& saved_state);

  PreemptionStats get_preemption_stats() const;
  const SchedulerMetrics& metrics() const { return metrics_; }

  SchedulerState save_state() const;
  // Replaces everything with `state`, re-arming capacity holds. All or nothing: a state
  // the invariant checker finds fault with (a hand-edited file: a duplicate task, an
  // agent on a missing PG, a reused PG id, a cyclic label rule) is refused, naming the
  // problems, and nothing changes.
  OpResult load_state(const SchedulerState& state);
  // What load_state would say of `state` without loading it: ok, or why it is refused.
  OpResult check_state(const SchedulerState& state) const;

  // Deletes every agent and destroys every PG (PG pools and kept PGs included).
  void shutdown();

  // Ledgers, PG pools, agents, tasks and the victim index agree, and every placement
  // group belongs to an agent, a PG pool or the kept set; empty when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  struct Handlers {
    StatePreserver preserver;
    StateRestorer restorer;
  };

  // `task` (its traits and id set) runs on `agent` from now.
  const Task& start_task(Task task, Agent& agent);
  // Runs the task on `idle`, or on a new dedicated agent (in a PG of the pool's PG pool,
  // `preferred_pg` first, when it has one).
  SubmitResult start_on_agent(const TaskSpec& spec, Agent* idle, std::optional<PgId> preferred_pg);
  // A running task leaves its agent, ending in `state`; unless completed, its work since
  // the last checkpoint is counted as lost. A dedicated agent goes too (its PG back to
  // the PG pool) unless held for a preemptor or `keep_agent` (the caller removes it).
  void end_task(Task& task, TaskState state, bool keep_agent = false);
  OpResult complete(Task& task);
  // What happens to a removed agent's PG: destroyed, kept, or (when its task ended)
  // released: a pooled PG goes back to its PG pool, the agent's own PG is destroyed.
  enum class PgFate { kDestroy, kKeep, kRelease };
  void remove_agent(Agent& agent, PgFate fate);
  // `why` is unset for a manual execute_preemption with no evaluation naming the victim.
  // The saved state goes on the victim (the outcome's saved_state is left empty).
  PreemptionOutcome preempt(Task& victim, std::optional<PreemptReason> why, const std::string& preemptor,
                            const std::string& hold_for);
  // Both submit paths: the strategy's priority, the checks, the latency metric, then
  // `place` (the path's own way to find room).
  SubmitResult submit(const TaskSpec& submitted, SubmitResult (Scheduler::*place)(const TaskSpec&));
  SubmitResult place_with_preemption(const TaskSpec& spec);
  SubmitResult place_with_pg_pool(const TaskSpec& spec);
  // Replaces everything with `state` without checking it (load_state checks first).
  OpResult apply_state(const SchedulerState& state);

  const Clock& clock_;
  Actuator* actuator_;
  TimerService* timers_;
  AgentManager agents_;
  CapacityHolds holds_;
  PgPools pg_pools_;
  std::map<std::string, Handlers> handlers_;
  TaskTable tasks_;
  PreemptionPolicy policy_;
  VictimIndex index_;  // the running tasks, by victim class
  // The reason each candidate of the last evaluation was given, for execute_preemption.
  std::map<std::string, PreemptReason> last_reasons_;
  PreemptionStats stats_;
  SchedulerMetrics metrics_;
  std::unique_ptr<SchedulingStrategy> strategy_;
};

// What `core` holds, per pool and overall (seed 001's stats()): a view over its tasks,
// agents and nodes.
SchedulerStats summarize(const Scheduler& core);

}  // namespace meshsim::scheduler
