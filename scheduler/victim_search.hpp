#pragma once

// Which running tasks a submission preempts (submit_task_with_preemption,
// submit_with_pg_preemption): one victim that frees enough when there is one (preferring
// one whose placement group the task can take over, then the best score), else the
// best-scoring until enough is free, less those the others make unnecessary. Reads the
// core's state and changes nothing but the victim index's lazy bookkeeping; the
// Scheduler preempts what it returns.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/agent_manager.hpp"
#include "scheduler/pg_pools.hpp"
#include "scheduler/scheduling_strategy.hpp"
#include "scheduler/task.hpp"
#include "scheduler/victim_index.hpp"

namespace meshsim::scheduler {

class VictimSearch {
 public:
  // How deep the search looks into one victim class for a single victim that frees enough.
  static constexpr std::size_t kSingleVictimScan = 64;

  struct Victim {
    const Task* task;
    PreemptReason reason;
    double score;
  };

  VictimSearch(const AgentManager& agents, const PgPools& pg_pools,
               VictimIndex& index, const std::unordered_map<std::uint64_t, Task*>& running,
               const SchedulingStrategy& strategy, double now)
      : agents_(agents), pg_pools_(pg_pools), index_(index), running_(running), strategy_(strategy), now_(now) {}

  // The victims for `spec`, none when the tasks the policy lets it preempt do not free
  // enough; with `pg_reuse_only`, one victim whose placement group it can take over.
  // `considered` (if given) receives how many tasks the policy let it consider.
  std::optional<std::vector<Victim>> choose(const TaskSpec& spec, bool pg_reuse_only,
                                            std::size_t* considered = nullptr);
  // Whether `spec` would fit once these tasks were preempted (none: as things are).
  bool fits_after(const TaskSpec& spec, const std::vector<const Task*>& victims) const;
  // Whether preempting `victim` frees a placement group of `spec`'s PG pool that fits it.
  bool frees_fitting_pg(const Task& victim, const TaskSpec& spec) const;

 private:
  class FreedRoom;

  const AgentManager& agents_;
  const PgPools& pg_pools_;
  VictimIndex& index_;
  const std::unordered_map<std::uint64_t, Task*>& running_;  // by sequence number
  const SchedulingStrategy& strategy_;
  double now_;
};

// What the victim index keeps of a running task: its pool, labels, priority and times,
// and for a dedicated agent the room preempting it frees (its resources, and the most
// GPU its own placement group holds on one node, as FreedRoom counts it).
VictimIndex::TaskInfo victim_info(const Task& task, const AgentManager& agents);

}  // namespace meshsim::scheduler
