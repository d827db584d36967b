#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <optional>

namespace meshsim::engine {

// Simulated time in integer microseconds. Integer time makes ties exact and runs
// reproducible (no epsilon comparisons); "no time" is std::optional<SimTime>, never -1.
class SimTime {
 public:
  constexpr SimTime() = default;

  static constexpr SimTime from_us(std::int64_t us) { return SimTime(us); }
  static constexpr SimTime from_ms(std::int64_t ms) { return SimTime(ms * 1000); }
  // Rounds to the nearest microsecond.
  static constexpr SimTime from_seconds(double seconds) {
    const double us = seconds * 1e6;
    return SimTime(static_cast<std::int64_t>(us >= 0 ? us + 0.5 : us - 0.5));
  }
  // The first microsecond at or after `seconds` (a delay that must never fire early).
  static SimTime from_seconds_up(double seconds) { return SimTime(static_cast<std::int64_t>(std::ceil(seconds * 1e6))); }
  // The longest span a simulation represents (about 31,700 years): far below where
  // microseconds overflow, so sums of in-range times cannot. Inputs beyond it are refused.
  static constexpr double kMaxSeconds = 1e12;
  // from_seconds for a value read from input: nullopt when not finite or beyond
  // +/- kMaxSeconds.
  static std::optional<SimTime> from_seconds_checked(double seconds) {
    if (!std::isfinite(seconds) || std::fabs(seconds) > kMaxSeconds) return std::nullopt;
    return from_seconds(seconds);
  }
  static constexpr SimTime max_representable() { return SimTime(static_cast<std::int64_t>(kMaxSeconds * 1e6)); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t us() const { return us_; }
  // Divided, not multiplied by 1e-6: division rounds correctly, so 100000 us reads 0.1
  // (the product reads 0.09999999999999999 in summary.json).
  constexpr double seconds() const { return static_cast<double>(us_) / 1e6; }
  constexpr double ms() const { return static_cast<double>(us_) * 1e-3; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime(us_ + o.us_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(us_ - o.us_); }
  constexpr SimTime& operator+=(SimTime o) {
    us_ += o.us_;
    return *this;
  }

 private:
  constexpr explicit SimTime(std::int64_t us) : us_(us) {}
  std::int64_t us_ = 0;
};

}  // namespace meshsim::engine
