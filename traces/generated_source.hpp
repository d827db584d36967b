#pragma once

#include <cstdint>

#include "sim/engine/rng.hpp"
#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// The most users a shared_prefix workload may have (their histories are kept).
inline constexpr std::uint64_t kMaxSharedPrefixUsers = 1'000'000;
// A multi-turn conversation starts afresh before its prompt and answer pass this many
// tokens or it has this many turns (a request carries its whole history).
inline constexpr std::uint64_t kMaxConversationTokens = std::uint64_t{1} << 24;
inline constexpr std::size_t kMaxConversationTurns = 256;

// Draws one token count from a LengthSpec.
std::uint32_t sample_length(const LengthSpec& spec, engine::Rng& rng);

// Checks a length model; the error names `field` and what it expected.
Status validate_length(const LengthSpec& spec, const std::string& field);

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
  double next_gap_s(double rate_per_s);
  // Moves the clock on to the next arrival; false when the stages are over.
  bool advance_clock();
  // Fills a shared_prefix request's prompt: its user's system prompt, earlier turns and
  // new question.
  void fill_shared_prefix(TraceRequest& request, std::uint32_t question_tokens);

  GeneratorSpec spec_;
  engine::Rng arrival_rng_;
  engine::Rng length_rng_;
  engine::Rng user_rng_;
  double clock_s_ = 0.0;
  std::size_t stage_ = 0;
  double stage_start_s_ = 0.0;
  double stage_end_s_ = 0.0;
  std::uint64_t in_stage_ = 1;  // requests of the current stage so far (the first at 0)
  std::uint64_t generated_ = 0;
  bool finished_ = false;
  // shared_prefix with multi_turn: each user's earlier turns (question, answer, ...).
  std::vector<std::vector<ContentSegment>> histories_;
  std::uint64_t next_content_id_ = kFirstTurnContentId;
  // System prompts are named 1..system_prompts; turns from here up.
  static constexpr std::uint64_t kFirstTurnContentId = std::uint64_t{1} << 40;
};

}  // namespace meshsim::traces
