#include "traces/memory_trace.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::traces {

Expected<SharedTrace> load_trace(RequestSource& source, std::uint64_t max_requests) {
  auto requests = std::make_shared<std::vector<TraceRequest>>();
  for (;;) {
    auto next = source.next();
    if (!next) return next.error();
    if (!next->has_value()) break;
    if (requests->size() >= max_requests) {
      return Error{source.describe() + ": more than " + std::to_string(max_requests) +
                   " requests; bound the workload (a window, a request limit or a generator duration)"};
    }
    requests->push_back(std::move(**next));
  }
  return SharedTrace(std::move(requests));
}

WindowSource::WindowSource(SharedTrace trace, SimTime start, SimTime length, double rate_scale)
    : trace_(std::move(trace)), start_(start), rate_scale_(rate_scale) {
  MESHSIM_CHECK(trace_ != nullptr, "WindowSource: no trace");
  MESHSIM_CHECK(rate_scale > 0 && std::isfinite(rate_scale), "WindowSource: rate_scale must be > 0");
  const auto by_arrival = [](const TraceRequest& r, SimTime t) { return r.arrival < t; };
  const double end_us = static_cast<double>(start.us()) + static_cast<double>(length.us()) * rate_scale;
  const SimTime end = end_us >= static_cast<double>(SimTime::max_representable().us())
                          ? SimTime::max_representable()
                          : SimTime::from_us(static_cast<std::int64_t>(std::llround(end_us)));
  begin_ = static_cast<std::size_t>(std::lower_bound(trace_->begin(), trace_->end(), start, by_arrival) -
                                    trace_->begin());
  end_ = static_cast<std::size_t>(std::lower_bound(trace_->begin() + static_cast<std::ptrdiff_t>(begin_),
                                                   trace_->end(), end, by_arrival) -
                                  trace_->begin());
  next_ = begin_;
}

Expected<std::optional<TraceRequest>> WindowSource::next() {
  if (next_ >= end_) return std::optional<TraceRequest>();
  TraceRequest request = (*trace_)[next_++];
  const double offset_us = static_cast<double>((request.arrival - start_).us()) / rate_scale_;
  request.arrival = SimTime::from_us(static_cast<std::int64_t>(std::llround(offset_us)));
  return std::optional<TraceRequest>(std::move(request));
}

double WindowSource::progress() const {
  return end_ == begin_ ? 1.0 : static_cast<double>(next_ - begin_) / static_cast<double>(end_ - begin_);
}

std::string WindowSource::describe() const {
  return "window of " + std::to_string(size()) + " requests from " + std::to_string(start_.seconds()) + " s";
}

}  // namespace meshsim::traces
