#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/cluster_state.hpp"
#include "scheduler/core_time.hpp"
#include "scheduler/preemption_rules.hpp"
#include "scheduler/resources.hpp"

namespace meshsim::scheduler {

// Where a task is. Every task is in exactly one state; preempted work is never dropped
// silently: it stays preempted with its saved state until restored (requeued), or is
// lost with its lost work counted.
enum class TaskState { kRunning, kCompleted, kPreempted, kRequeued, kLost };
inline constexpr EnumNames kTaskStateNames{std::array{std::pair{TaskState::kRunning, std::string_view("running")},
                                                      std::pair{TaskState::kCompleted, std::string_view("completed")},
                                                      std::pair{TaskState::kPreempted, std::string_view("preempted")},
                                                      std::pair{TaskState::kRequeued, std::string_view("requeued")},
                                                      std::pair{TaskState::kLost, std::string_view("lost")}}};

// What a task is, whichever door it comes through: submissions, the registration of a
// task already running, the core's own record and the state saved at a preemption all
// carry these fields, from this one list.
struct TaskTraits {
  double priority = 0.0;
  Labels labels;
  double estimated_duration = 0.0;  // seconds; 0 = unknown
  std::string payload;              // opaque to the core
  double checkpoint_interval = 0.0;  // seconds; 0 = none (a preemption loses all work)
  bool operator==(const TaskTraits&) const = default;
};

// A task's snapshot taken when it is preempted: the default saved state, and what a
// pool's preserver receives. `custom` is what the preserver returned (opaque text).
struct SavedState : TaskTraits {
  std::string task_id;
  std::string pool_name;
  std::string agent_name;
  double elapsed = 0.0;  // seconds run before the preemption
  std::optional<std::string> custom;
  bool operator==(const SavedState&) const = default;
};

// What submit_task_with_preemption and submit_with_pg_preemption take.
struct TaskSpec : TaskTraits {
  std::string task_id;
  std::string pool;
  std::string actor_class = "worker";
  ResourceVector resources;
  std::string agent_name;  // empty: the task id
};

// What register_running_task takes: a task already running on an existing agent.
struct RunningTaskSpec : TaskTraits {
  std::string task_id;
  std::string agent_name;
  std::string pool_name;  // empty: the agent's
};

struct Task : TaskTraits {
  std::string id;  // the task's name (the seeds' task_id)
  TaskId handle = kNoTask;  // its dense id while the core holds it (TaskTable)
  std::string pool;
  std::string agent;
  AgentId agent_id = kNoAgent;  // while running: its agent, as the core reaches it
  // While running: its agent's kind (the seeds' actor_class), what a strategy tells kinds
  // of work apart by (the shared cluster's serving instances from batch jobs). Taken
  // from the agent, so a loaded state sets it again rather than saving it.
  std::string actor_class;
  SimTime start_time = SimTime::zero();
  std::uint64_t seq = 0;  // registration order
  TaskState state = TaskState::kRunning;
  std::optional<SavedState> saved_state;
  double lost_work = 0.0;  // seconds of work lost to preemption or agent failure

  // Seconds of work since the last checkpoint (all of it without checkpoints) at `now`.
  double work_since_checkpoint(SimTime now) const;
  // Seconds run by `now` (never negative). The difference of the two instants in
  // seconds, as the core computed it when it kept seconds, so scores and saved states
  // read as they did.
  double elapsed(SimTime now) const { return std::max(0.0, now.seconds() - start_time.seconds()); }
  // When it should end, in seconds (its start when the duration is unknown): a score's
  // term, not an instant the clock reaches.
  double deadline() const { return start_time.seconds() + estimated_duration; }
};

}  // namespace meshsim::scheduler
