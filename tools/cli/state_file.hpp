#pragma once

#include <string>

#include "scheduler/scheduler.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// The scheduler's state file (JSON): everything SchedulerState holds, so that saving,
// loading and saving again gives the same bytes, and a loaded scheduler behaves as the
// one that saved it. Written atomically (temporary file, then rename).
Status write_state_file(const std::string& path, const scheduler::SchedulerState& state);
Expected<scheduler::SchedulerState> read_state_file(const std::string& path);

}  // namespace meshsim::cli
