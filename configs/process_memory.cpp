#include "configs/process_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

namespace meshsim::configs {

MemoryAllowance process_memory_allowance() {
  MemoryAllowance out{static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE)),
                      "the machine's memory"};
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<double>(limit.rlim_cur) < out.bytes) {
    out = {static_cast<double>(limit.rlim_cur), "its address-space limit (ulimit -v)"};
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // "max" when unlimited: not a number
  double cgroup_bytes = 0;
  if (cgroup >> cgroup_bytes && cgroup_bytes > 0 && cgroup_bytes < out.bytes) {
    out = {cgroup_bytes, "its cgroup's memory.max"};
  }
  return out;
}

}  // namespace meshsim::configs
