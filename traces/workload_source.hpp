#pragma once

#include <cstdint>
#include <memory>

#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// Applies a WorkloadSpec's time window, rate scale and request limit to another source,
// still streaming: reading stops at the first request past the window.
// A source's requests in the window [window_start, window_end), moved to start at 0 and
// compressed by rate_scale, at most max_requests of them. A window holding none of the
// source's requests is an error where the user chose it (a replay's workload.window:
// there is nothing to replay), and simply empty where a program chose it (an RL
// episode's window in a quiet hour or a gap of the trace).
enum class EmptyWindow { kRefuse, kAllow };
class ShapedSource final : public RequestSource {
 public:
  ShapedSource(std::unique_ptr<RequestSource> inner, SimTime window_start,
               std::optional<SimTime> window_end, double rate_scale,
               std::optional<std::uint64_t> max_requests, EmptyWindow empty = EmptyWindow::kRefuse);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override;
  std::string describe() const override { return inner_->describe(); }
  std::optional<double> data_end_s() const override { return inner_->data_end_s(); }

 private:
  // An empty window is an error naming where the workload's requests are (a window past
  // them once ran an empty simulation up to the clock's limit).
  Error empty_window() const;

  std::unique_ptr<RequestSource> inner_;
  SimTime window_start_;
  std::optional<SimTime> window_end_;
  double rate_scale_;
  std::optional<std::uint64_t> max_requests_;
  EmptyWindow empty_;
  std::uint64_t emitted_ = 0;
  std::uint64_t skipped_ = 0;  // before the window's start
  bool seen_any_ = false;
  SimTime first_seen_, last_seen_;  // of the inner source's requests, when seen_any_
  bool finished_ = false;
};

// Checks a WorkloadSpec's window and rate scale.
Status validate_shaping(const WorkloadSpec& spec);

// Checks that a workload can give each request one of the scenario's classes of service:
// by share, by the trace's class column, or by ServeGen client. A workload swapped in for
// the scenario's own (--trace, a sweep's traces) must not lose the classes silently.
Status validate_classes(const WorkloadSpec& spec);

// Opens the source a WorkloadSpec names (a trace file or a generator seeded from `seed`)
// with its window, rate scale and limit applied. Errors name the file or the field.
Expected<std::unique_ptr<RequestSource>> open_workload(const WorkloadSpec& spec, std::uint64_t seed);

// Opens a trace file on its own (no shaping).
Expected<std::unique_ptr<RequestSource>> open_trace_file(const TraceFileSpec& spec);

}  // namespace meshsim::traces
