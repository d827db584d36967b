#pragma once

#include <cstdint>
#include <vector>

#include "sim/metrics/run_metrics.hpp"

namespace meshsim::metrics {

// Whether a run's deployment kept up with its arrivals, judged over the second half of
// the time requests arrived (the first half may be a warm-up; what comes after the last
// arrival is the backlog draining): the requests that left (completed or dropped)
// against those that arrived, the backlog (queued + running) at the half's start and
// end, and the requests still waiting for admission at its end. Overloaded: the backlog
// grew with fewer than kKeptShare of the arrivals leaving, or more than kWaitingShare of
// the half's arrivals were still waiting when the last one came (a standing queue built
// earlier that the deployment never worked off).
struct OverloadVerdict {
  bool overloaded = false;
  double from_s = 0.0, to_s = 0.0;
  double arrival_rate = 0.0, departure_rate = 0.0;  // requests/s over [from_s, to_s]
  std::uint64_t backlog_before = 0, backlog_after = 0;
  std::uint64_t waiting_after = 0;  // queued, not running, at to_s
};

// Reads a run's time series row by row (bounded: the rows coarsen as a replay goes on).
class OverloadWatch {
 public:
  // A deployment that keeps up lets at least this share of the arrivals leave...
  static constexpr double kKeptShare = 0.9;
  // ...and has no more than this share of them waiting for admission at the end.
  static constexpr double kWaitingShare = 0.05;
  // Fewer arrivals than this in the half judged say nothing either way.
  static constexpr std::uint64_t kMinArrivals = 50;

  void add(const TimeseriesRow& row);
  OverloadVerdict verdict() const;

 private:
  struct Point {
    double end_s = 0.0;
    std::uint64_t arrived = 0, left = 0;  // since the run's start
    std::uint64_t backlog = 0;            // at end_s
    std::uint64_t waiting = 0;            // of the backlog, queued
  };
  double start_s_ = 0.0;
  std::vector<Point> points_;
};

}  // namespace meshsim::metrics
