#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <string>
#include <string_view>

namespace meshsim::scheduler {

// A Prometheus-style histogram of latencies in milliseconds (cumulative buckets are
// formed when exported).
struct LatencyHistogram {
  // Upper bounds (ms): most of the core's calls take 1 to 2.5 µs, so the buckets start
  // ten times finer, at 0.1 µs.
  static constexpr std::array<double, 15> kBoundsMs = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                       0.005,  0.01,    0.025,  0.05,  0.1,
                                                       0.25,   0.5,     1.0,    10.0,  100.0};
  std::array<std::uint64_t, kBoundsMs.size() + 1> counts{};  // the last: above every bound
  double sum_ms = 0.0;
  std::uint64_t count = 0;

  void observe(double ms) {
    std::size_t i = 0;
    while (i < kBoundsMs.size() && ms > kBoundsMs[i]) ++i;
    ++counts[i];
    sum_ms += ms;
    ++count;
  }
  // The q-quantile (q in [0, 1]) as Prometheus' histogram_quantile estimates it: linear
  // within the bucket that holds it (from 0 in the first); the last bound when it lies
  // above every bound; 0 when empty.
  double quantile(double q) const {
    if (count == 0) return 0.0;
    const double rank = q * static_cast<double>(count);
    double below = 0.0;
    for (std::size_t i = 0; i < kBoundsMs.size(); ++i) {
      const auto in_bucket = static_cast<double>(counts[i]);
      if (below + in_bucket >= rank && in_bucket > 0) {
        const double lower = i == 0 ? 0.0 : kBoundsMs[i - 1];
        return lower + (kBoundsMs[i] - lower) * (rank - below) / in_bucket;
      }
      below += in_bucket;
    }
    return kBoundsMs.back();
  }
};

// The seed's metrics (schedulemesh_*): preemptions by pool and reason, and the
// wall-clock time spent in the core executing preemptions and placing tasks. Latencies
// are real time, not simulated time, so unlike every other output they differ from run
// to run; that is what benchmarking scheduling latency measures.
struct SchedulerMetrics {
  // Preemptions by pool, then reason; looked up without building keys (one is counted
  // on every preemption).
  using CountByReason = std::map<std::string, std::uint64_t, std::less<>>;
  std::map<std::string, CountByReason, std::less<>> preemption_count;
  LatencyHistogram preemption_execution_latency_ms;
  LatencyHistogram task_schedule_latency_ms;

  void count_preemption(std::string_view pool, std::string_view reason) {
    auto by_pool = preemption_count.find(pool);
    if (by_pool == preemption_count.end()) by_pool = preemption_count.emplace(std::string(pool), CountByReason{}).first;
    auto by_reason = by_pool->second.find(reason);
    if (by_reason == by_pool->second.end()) by_reason = by_pool->second.emplace(std::string(reason), 0).first;
    ++by_reason->second;
  }
};

// Measures the wall-clock time of a scope into a histogram.
class ScopedLatency {
 public:
  explicit ScopedLatency(LatencyHistogram& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~ScopedLatency() {
    into_.observe(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedLatency(const ScopedLatency&) = delete;
  ScopedLatency& operator=(const ScopedLatency&) = delete;

 private:
  LatencyHistogram& into_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace meshsim::scheduler
