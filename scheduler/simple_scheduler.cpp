#include "scheduler/simple_scheduler.hpp"

namespace meshsim::scheduler {

SubmitResult SimpleScheduler::submit(const TaskSpec& spec) {
  if (scheduler_.pg_pools().find(spec.pool) != nullptr) {
    auto via_pg = scheduler_.submit_with_pg_preemption(spec);
    if (via_pg.result.success) return via_pg;
  }
  return scheduler_.submit_task_with_preemption(spec);
}

}  // namespace meshsim::scheduler
