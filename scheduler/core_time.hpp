#pragma once

#include "sim/engine/sim_time.hpp"

namespace meshsim::scheduler {

// The core's instants and waits: integer microseconds, the event loop's own clock, so
// the core and the simulation never disagree on a time. Seconds (the seeds' unit) are
// read and printed at the edges: scripts, state files, the policy's settings.
using engine::SimTime;

}  // namespace meshsim::scheduler
