#pragma once

#include <cstdint>
#include <vector>

namespace meshsim::rl {

// The actor-critic's sizes (no LibTorch here: checkpoint readers use it).
struct PolicyShape {
  std::int64_t observations = 0;
  std::int64_t actions = 0;     // action entries (one per pool)
  std::int64_t choices = 0;     // discrete: choices per entry; 0: continuous (Gaussian)
  std::vector<std::uint32_t> hidden = {64, 64};

  bool operator==(const PolicyShape&) const = default;
};

}  // namespace meshsim::rl
