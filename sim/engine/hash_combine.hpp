#pragma once

#include <cstdint>

namespace meshsim::engine {

// Folds `v` into the hash `h` through splitmix64's finaliser, a bijection that spreads
// every input bit over the output: for chained content hashes (a KV block's tokens and
// everything before them).
inline std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace meshsim::engine
