#pragma once

#include <cstdint>
#include <memory>

#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// Applies a WorkloadSpec's time window, rate scale and request limit to another source,
// still streaming: reading stops at the first request past the window.
class ShapedSource final : public RequestSource {
 public:
  ShapedSource(std::unique_ptr<RequestSource> inner, SimTime window_start,
               std::optional<SimTime> window_end, double rate_scale,
               std::optional<std::uint64_t> max_requests);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override;
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  SimTime window_start_;
  std::optional<SimTime> window_end_;
  double rate_scale_;
  std::optional<std::uint64_t> max_requests_;
  std::uint64_t emitted_ = 0;
  bool finished_ = false;
};

// Checks a WorkloadSpec's window and rate scale.
Status validate_shaping(const WorkloadSpec& spec);

// Opens the source a WorkloadSpec names (a trace file or a generator seeded from `seed`)
// with its window, rate scale and limit applied. Errors name the file or the field.
Expected<std::unique_ptr<RequestSource>> open_workload(const WorkloadSpec& spec, std::uint64_t seed);

// Opens a trace file on its own (no shaping).
Expected<std::unique_ptr<RequestSource>> open_trace_file(const TraceFileSpec& spec);

}  // namespace meshsim::traces
