#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "sim/run/scenario_run.hpp"
#include "sim/replay/replay.hpp"
#include "tools/cli/metrics_server.hpp"

namespace meshsim::cli {

// `meshsim replay --metrics-port`: passes everything on to the command's own observer and,
// at most twice a wall second and at the end, publishes the run's progress to `server`:
// meshsim_run_progress (fraction of the workload read), meshsim_simulated_seconds,
// meshsim_wall_seconds, meshsim_requests_total{status}, the last interval's gauges
// (queued and running requests, instances by state, KV-cache use, utilisation, GPUs held
// by serving and batch jobs, batch jobs by state) and, when the run has a shared cluster,
// its scheduling core's schedulemesh_* metrics. Everything is read on the simulation's
// thread, inside the run's own callbacks.
class LiveReplayMetrics final : public replay::ReplayObserver {
 public:
  LiveReplayMetrics(MetricsServer& server, replay::ReplayObserver& inner);
  // The run whose scheduling core to publish (once created).
  void watch(const run::ScenarioRun& run) { run_ = &run; }
  // The progress figures and the finished run's metrics.prom text, last.
  void publish_final(const std::string& finished_metrics);

  void on_request(const metrics::RequestRecord& record) override;
  void on_interval(const metrics::TimeseriesRow& row) override;
  void on_progress(double fraction, engine::SimTime now) override;
  void on_warning(const std::string& message) override { inner_.on_warning(message); }

 private:
  std::string progress_text() const;

  MetricsServer& server_;
  replay::ReplayObserver& inner_;
  const run::ScenarioRun* run_ = nullptr;
  std::chrono::steady_clock::time_point start_, last_publish_;
  double fraction_ = 0.0;
  engine::SimTime now_;
  std::array<std::uint64_t, 3> requests_{};  // by metrics::RequestStatus
  std::optional<metrics::TimeseriesRow> last_row_;
};

}  // namespace meshsim::cli
