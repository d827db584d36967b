#pragma once

#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {

// The seeds' SimpleScheduler: the few calls most users need, over a Scheduler. submit
// is submit_task_with_preemption; when a pool has a PG pool it tries the PG path first
// and falls back to preemption, as seed 000's demo does by hand.
class SimpleScheduler {
 public:
  explicit SimpleScheduler(Scheduler& scheduler) : scheduler_(scheduler) {}

  OpResult ensure_pool(PoolSpec spec, std::optional<PgPoolConfig> pg_pool = std::nullopt) {
    return scheduler_.ensure_pool(std::move(spec), std::move(pg_pool));
  }
  PolicyUpdateResult configure_preemption(const PolicyUpdate& update) {
    return scheduler_.update_preemption_policy(update);
  }
  SubmitResult submit(const TaskSpec& spec);
  OpResult complete(const std::string& task_id) { return scheduler_.complete(task_id); }
  SchedulerStats stats() const { return summarize(scheduler_); }
  Scheduler& scheduler() { return scheduler_; }

 private:
  Scheduler& scheduler_;
};

}  // namespace meshsim::scheduler
