#pragma once

#include <iosfwd>

#include "scheduler/scheduler.hpp"

namespace meshsim::cli {

// The scheduling core's metrics in the Prometheus text exposition format (version
// 0.0.4), with the seed's names: schedulemesh_preemption_count{pool,reason},
// schedulemesh_preemption_execution_latency_ms and schedulemesh_task_schedule_latency_ms
// (wall-clock histograms), and pool / PG-pool usage gauges.
void write_scheduler_metrics(std::ostream& out, const scheduler::Scheduler& scheduler);

}  // namespace meshsim::cli
