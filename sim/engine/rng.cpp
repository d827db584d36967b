#include "sim/engine/rng.hpp"

#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"
#include "sim/engine/digest.hpp"

namespace meshsim::engine {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& word : state_) word = splitmix64(seed);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::uniform_int(std::uint64_t bound) {
  MESHSIM_CHECK(bound > 0, "uniform_int needs a positive bound");
  // Reject the top partial block of the 64-bit range so every residue is equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % bound;
}

double Rng::exponential(double rate) {
  MESHSIM_CHECK(rate > 0, "exponential needs a positive rate");
  return -std::log1p(-uniform()) / rate;
}

double Rng::normal() {
  const double u1 = 1.0 - uniform();  // in (0, 1]: log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::gamma(double shape, double scale) {
  MESHSIM_CHECK(shape > 0 && scale > 0, "gamma needs positive shape and scale");
  if (shape < 1.0) {
    // Boost: Gamma(k) = Gamma(k + 1) * U^(1/k).
    const double u = 1.0 - uniform();
    return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x;
    double v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

std::uint64_t derive_seed(std::uint64_t root_seed, std::string_view name) {
  std::uint64_t mixed = root_seed ^ Digest().add(name).value();
  return splitmix64(mixed);
}

Rng& RngStreams::stream(std::string_view name) {
  auto it = streams_.find(name);
  if (it == streams_.end()) {
    it = streams_.emplace(std::string(name), Rng(derive_seed(seed_, name))).first;
  }
  return it->second;
}

}  // namespace meshsim::engine
