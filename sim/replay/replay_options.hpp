#pragma once

// What a Replay runs by (configs fills it). Plain values.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/sim_time.hpp"
#include "sim/metrics/run_metrics.hpp"
#include "sim/metrics/service_class.hpp"

namespace meshsim::replay {

using engine::SimTime;

struct ReplayOptions {
  std::optional<SimTime> until;  // stop the clock here; later arrivals are not read
  SimTime timeseries_interval = SimTime::from_seconds(10);
  // Rows of the time series past which the interval doubles (with a warning), and again
  // after each further half as many: however long a run lasts (a stretched trace would
  // otherwise write gigabytes), it writes at most 2 * budget + 64 rows.
  std::uint64_t timeseries_row_budget = 100'000;
  metrics::SloTargets slo;
  // Classes of service (none: every request is judged by `slo`).
  std::vector<metrics::ServiceClass> classes;
  // The run ends once its workload is served (what else still has events stops there).
  // Off, the run lasts to `until` and is measured to there: for a driver that keeps acting
  // (the RL environment: instances still exist, cost and scale after the last request)
  // and for a shared cluster, whose batch jobs do not end with the serving workload.
  bool stop_when_served = true;
  // At most this many requests in the system at once (workload.max_concurrency): a
  // request arriving while they are is sent when one leaves, its arrival then, as a
  // benchmark client's --max-concurrency holds it. With every request arriving at once it
  // is a closed loop of this many clients, each sending its next request when its last
  // one left. Unset: every request is sent when it arrives.
  std::optional<std::uint32_t> max_concurrency;
};

}  // namespace meshsim::replay
