#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scheduler/scheduler.hpp"

namespace meshsim::cli {

// The scheduling core's metrics in the Prometheus text exposition format (version
// 0.0.4), with the seed's names: schedulemesh_preemption_count{pool,reason},
// schedulemesh_preemption_execution_latency_ms and schedulemesh_task_schedule_latency_ms
// (wall-clock histograms), and pool / PG-pool usage gauges.
void write_scheduler_metrics(std::ostream& out, const scheduler::Scheduler& scheduler);

// A finished replay's metrics.prom: its headline figures from summary.json as meshsim_*
// gauges and counters (requests by status, SLO attainment, latency quantiles, GPU-hours,
// scaling actions, batch jobs by state and batch GPU-hours), then, for a shared cluster,
// the scheduling core's schedulemesh_* metrics.
void write_replay_metrics(std::ostream& out, const nlohmann::ordered_json& summary,
                          const scheduler::Scheduler* scheduler);

}  // namespace meshsim::cli
