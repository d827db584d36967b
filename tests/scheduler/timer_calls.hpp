#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <utility>

#include "scheduler/world.hpp"

namespace meshsim::scheduler {

// Timers that run a test's lambda: one callable kept per armed timer, its index the tag
// (the core's own timers carry a tag and need none).
class TimerCalls final : public TimerTarget {
 public:
  // Fires `call` at the first microsecond at or after `seconds` from the clock's now.
  TimerId after(TimerService& timers, const Clock& clock, double seconds, std::function<void()> call) {
    calls_.push_back(std::move(call));
    return timers.call_at(clock.now() + SimTime::from_seconds_up(seconds), *this, calls_.size() - 1);
  }
  void on_timer(std::uint64_t tag) override { calls_.at(tag)(); }

 private:
  std::deque<std::function<void()>> calls_;
};

}  // namespace meshsim::scheduler
