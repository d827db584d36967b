#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace meshsim::engine {

// A random stream: xoshiro256** seeded through splitmix64. The distributions below are
// written out here rather than taken from <random>, whose distributions differ between
// standard libraries; this way a seed gives the same numbers with any compiler.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, bound), bound > 0, without modulo bias.
  std::uint64_t uniform_int(std::uint64_t bound);
  // Exponential with the given rate (mean 1 / rate), rate > 0.
  double exponential(double rate);
  // Standard normal (Box-Muller; one draw per call, so the stream position is simple).
  double normal();
  // Gamma with shape k > 0 and scale theta > 0 (Marsaglia-Tsang).
  double gamma(double shape, double scale);

  // The generator's whole state, to save in a checkpoint and resume the stream exactly.
  using State = std::array<std::uint64_t, 4>;
  State state() const { return {state_[0], state_[1], state_[2], state_[3]}; }
  static Rng from_state(const State& state) {
    Rng rng(0);
    for (std::size_t i = 0; i < 4; ++i) rng.state_[i] = state[i];
    return rng;
  }

 private:
  std::uint64_t state_[4];
};

// Named, independently seeded streams: each consumer of randomness ("arrivals",
// "lengths", ...) draws from its own stream, so adding a new consumer does not shift
// the numbers any other consumer sees.
class RngStreams {
 public:
  explicit RngStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  Rng& stream(std::string_view name);

 private:
  std::uint64_t seed_;
  std::map<std::string, Rng, std::less<>> streams_;
};

// The seed of stream `name` under a root seed: a fixed hash, stable across platforms.
std::uint64_t derive_seed(std::uint64_t root_seed, std::string_view name);

}  // namespace meshsim::engine
