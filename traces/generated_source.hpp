#pragma once

#include <cstdint>

#include "sim/engine/rng.hpp"
#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// Draws one token count from a LengthSpec.
std::uint32_t sample_length(const LengthSpec& spec, engine::Rng& rng);

// Checks a spec's figures (positive rates, quantiles increasing from p = 0 to 1, ...);
// the error names the offending field.
Status validate(const GeneratorSpec& spec);

// Requests drawn from a GeneratorSpec. Arrivals and lengths use separate named streams
// of the seed, so changing the length model keeps the arrival times.
class GeneratedSource final : public RequestSource {
 public:
  // Precondition: validate(spec) succeeded.
  GeneratedSource(GeneratorSpec spec, std::uint64_t seed);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override;
  std::string describe() const override { return "generator:" + spec_.name; }

 private:
  double next_gap_s();

  GeneratorSpec spec_;
  engine::Rng arrival_rng_;
  engine::Rng length_rng_;
  double clock_s_ = 0.0;
  std::uint64_t generated_ = 0;
  bool finished_ = false;
};

}  // namespace meshsim::traces
