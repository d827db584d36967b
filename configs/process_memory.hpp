#pragma once

#include <string>

namespace meshsim::configs {

// The memory this process may use, and what sets it: the least of its address-space limit
// (ulimit -v), its cgroup's memory.max and the machine's RAM. What the run checks its
// memory bounds against (serving.max_requests_in_system); read here, since the simulation
// opens no file.
struct MemoryAllowance {
  double bytes = 0;
  std::string source;  // "its address-space limit (ulimit -v)", ...
};
MemoryAllowance process_memory_allowance();

}  // namespace meshsim::configs
