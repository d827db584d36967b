#pragma once

#include <chrono>
#include <cstdio>

#include "sim/engine/sim_time.hpp"

namespace meshsim::cli {

// A one-line progress bar on stderr, drawn only when stderr is a terminal and CI is not
// set (so logs stay clean), and redrawn at most ten times a second.
class ProgressBar {
 public:
  // `wanted` false: never draws (a run among many in a sweep).
  explicit ProgressBar(bool wanted = true);
  void update(double fraction, engine::SimTime now);
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace meshsim::cli
