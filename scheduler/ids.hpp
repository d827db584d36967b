#pragma once

#include <cstdint>

namespace meshsim::scheduler {

// The core's dense ids. Inside the core and between it and its simulation binding,
// tasks, agents and placement groups are these numbers; names (the seeds' task ids and
// agent names) are for the API's edge: scripts, state files, logs and metrics.

// A placement group's id (never reused within a run).
using PgId = std::uint64_t;
// An agent's dense id (the slot it occupies while it exists; reused once it is gone).
using AgentId = std::uint32_t;
inline constexpr AgentId kNoAgent = 0xFFFFFFFFu;
// A task's dense id: the slot it occupies in the core's task table while the core holds
// it (running, preempted, requeued or lost), kept when a task of its name runs again,
// reused once it completes and leaves.
using TaskId = std::uint32_t;
inline constexpr TaskId kNoTask = 0xFFFFFFFFu;

}  // namespace meshsim::scheduler
