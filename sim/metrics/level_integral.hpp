#pragma once

#include "sim/engine/sim_time.hpp"

namespace meshsim::metrics {

// The integral over simulated time of a level that changes at events (instances busy,
// GPUs held, servers paid for): GPU-hours, cost and utilisation stay exact while capacity
// comes and goes. Units: the level's units times microseconds.
class LevelIntegral {
 public:
  explicit LevelIntegral(engine::SimTime start = engine::SimTime::zero()) : since_(start) {}

  void set(double level, engine::SimTime now) {
    total_ = total(now);
    level_ = level;
    since_ = now;
  }
  void add(double delta, engine::SimTime now) { set(level_ + delta, now); }
  double level() const { return level_; }
  // Up to `now` (not before the last change).
  double total(engine::SimTime now) const { return total_ + level_ * static_cast<double>((now - since_).us()); }

 private:
  double level_ = 0.0;
  double total_ = 0.0;
  engine::SimTime since_;
};

}  // namespace meshsim::metrics
