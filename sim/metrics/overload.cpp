#include "sim/metrics/overload.hpp"

#include <algorithm>

namespace meshsim::metrics {

void OverloadWatch::add(const TimeseriesRow& row) {
  const Point last = points_.empty() ? Point{} : points_.back();
  if (points_.empty()) start_s_ = row.start.seconds();
  points_.push_back({row.end.seconds(), last.arrived + row.arrivals, last.left + row.completions + row.drops,
                     row.queued + row.running, row.queued});
}

OverloadVerdict OverloadWatch::verdict() const {
  OverloadVerdict v;
  if (points_.empty()) return v;
  // The span judged ends with the last row that had arrivals: a run that drains its
  // backlog after the workload ended still could not keep up while requests came.
  auto last = points_.end() - 1;
  while (last != points_.begin() && last->arrived == std::prev(last)->arrived) --last;
  const Point& end = *last;
  // The half starts at the last row boundary at or before the run's midpoint.
  const double middle = (start_s_ + end.end_s) / 2.0;
  const auto after = std::upper_bound(points_.begin(), last, middle,
                                      [](double t, const Point& p) { return t < p.end_s; });
  const Point start = after == points_.begin() ? Point{start_s_, 0, 0, 0, 0} : *std::prev(after);
  v.from_s = start.end_s;
  v.to_s = end.end_s;
  const std::uint64_t arrived = end.arrived - start.arrived, left = end.left - start.left;
  const double seconds = v.to_s - v.from_s;
  v.arrival_rate = seconds > 0 ? static_cast<double>(arrived) / seconds : 0.0;
  v.departure_rate = seconds > 0 ? static_cast<double>(left) / seconds : 0.0;
  v.backlog_before = start.backlog;
  v.backlog_after = end.backlog;
  v.waiting_after = end.waiting;
  const auto share = [&](double s) { return s * static_cast<double>(arrived); };
  const bool falling_behind = static_cast<double>(left) < share(kKeptShare) && v.backlog_after > v.backlog_before;
  const bool standing_queue = static_cast<double>(v.waiting_after) > share(kWaitingShare);
  v.overloaded = arrived >= kMinArrivals && (falling_behind || standing_queue);
  return v;
}

}  // namespace meshsim::metrics
