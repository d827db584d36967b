#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/cluster/serving_system.hpp"
#include "sim/engine/timer.hpp"
#include "sim/metrics/overload.hpp"
#include "sim/metrics/run_metrics.hpp"
#include "sim/replay/replay_options.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::replay {

using engine::SimTime;

// What a replay reports as it goes; the edges (files, terminal) implement it.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  // A request arrived (before the cluster sees it); its arrival is the clock's now.
  virtual void on_arrival(const traces::TraceRequest&) {}
  // A request left the system (completed or dropped), or, at the end, is still in it.
  virtual void on_request(const metrics::RequestRecord&) {}
  virtual void on_interval(const metrics::TimeseriesRow&) {}
  // Roughly every few thousand events: fraction of the workload read, in [0, 1].
  virtual void on_progress(double /*fraction*/, SimTime /*now*/) {}
  // Something the user should know that does not stop the run (printed, not written to
  // the run folder).
  virtual void on_warning(const std::string& /*message*/) {}
};

struct ReplayResult {
  SimTime end_time;  // the clock when the replay stopped
  // When the last request of the workload left (unset: some were still in flight). Before
  // end_time only in a run that outlives its workload (stop_when_served false).
  std::optional<SimTime> workload_served_at;
  std::uint64_t events = 0;
  cluster::Utilisation utilisation;  // over the run (cluster::utilisation_between)
  metrics::OverloadVerdict overload;  // whether the deployment kept up (second half of the run)
  double gpu_hours = 0.0;    // GPUs held by instances (in any state) over time
  double instance_hours = 0.0;  // instances on servers over time
  double cost = 0.0;         // USD: the servers over time
  // Prefix caching per instance over the run (empty without it).
  std::vector<cluster::ServingSystem::PrefixCacheCounts> prefix_cache;
};

// Builds the serving system a replay drives, reporting to the replay's sink.
using ServingFactory =
    std::function<std::unique_ptr<cluster::ServingSystem>(engine::Simulation&, cluster::RequestSink&)>;

// Streams requests from a source into a cluster on the simulation's clock, one arrival
// event ahead (memory grows with requests in flight, not with trace length), and
// measures the outcome. run() does it all; a caller that acts between steps (an RL
// environment) calls start(), then advance_until() as often as it likes, then finish().
class Replay final : private engine::EventHandler, private cluster::RequestSink {
 public:
  Replay(engine::Simulation& sim, traces::RequestSource& source, const ServingFactory& serving,
         ReplayOptions options, ReplayObserver& observer);

  // Runs to the end of the workload (or `until`). Errors come from the source.
  Expected<ReplayResult> run();

  // The same in steps: start() once, advance_until(t) with t not decreasing (runs every
  // event up to t, or up to `until`, and leaves the clock there), finish() once. A source
  // that fails ends the run: advance_until() returns its error then and at every later
  // call, so a caller that acts between steps stops acting on a finished simulation.
  void start();
  [[nodiscard]] Status advance_until(SimTime time);
  // The workload has ended with nothing in flight (in a run that stops when served),
  // `until` is reached, or the source failed.
  bool done() const;
  Expected<ReplayResult> finish();

  // Fills what the serving system does not know into each row as it closes (a shared
  // cluster's batch columns); called with the row and its interval's start and end.
  using RowProbe = std::function<void(metrics::TimeseriesRow& row)>;
  void set_row_probe(RowProbe probe) { probe_ = std::move(probe); }

  SimTime now() const { return sim_.now(); }
  const metrics::RunMetrics& metrics() const { return metrics_; }
  cluster::ServingSystem& serving() { return *cluster_; }
  const cluster::ServingSystem& serving() const { return *cluster_; }

 private:
  enum EventKind : std::uint64_t { kArrival, kSample };
  void on_event(const engine::EventPayload& payload) override;
  void on_request_finished(const metrics::RequestRecord& record) override;
  void read_next_arrival();
  void sample();
  // Adds the prefix-cache lookups since the last row.
  void add_prefix_cache(metrics::TimeseriesRow& row);
  // `usage`: the cluster's at `end` (the clock may have moved past the last departure).
  void emit_row(SimTime end, const cluster::ServingSystem::Usage& usage);
  // Called whenever the workload may have ended: stops sampling and notes the time.
  void note_if_done();

  engine::Simulation& sim_;
  traces::RequestSource& source_;
  std::unique_ptr<cluster::ServingSystem> cluster_;
  ReplayOptions options_;
  ReplayObserver& observer_;
  metrics::RunMetrics metrics_;
  engine::Timer sample_timer_;
  std::optional<traces::TraceRequest> next_;  // the one request read ahead
  // next_ arrived while max_concurrency requests were in the system: it is sent when one
  // leaves (release_armed_: an arrival event is already scheduled to try again).
  bool held_ = false;
  bool release_armed_ = false;
  bool source_done_ = false;
  std::optional<SimTime> done_at_;  // when the last request left, if it has
  std::optional<Error> source_error_;
  metrics::TimeseriesRow row_;
  cluster::ServingSystem::Usage usage_at_row_start_;
  metrics::OverloadWatch overload_;  // reads every row
  std::vector<cluster::ServingSystem::PrefixCacheCounts> prefix_at_row_start_;
  RowProbe probe_;
  cluster::ServingSystem::Usage usage_at_done_;
  SimTime interval_;                  // the time series' interval now
  std::uint64_t rows_ = 0;            // rows emitted
  std::uint64_t rows_until_coarser_;  // when the interval doubles next
  std::uint64_t next_allowance_;      // rows allowed at the next interval
  enum class Phase { kCreated, kStarted, kFinished } phase_ = Phase::kCreated;
};

}  // namespace meshsim::replay
