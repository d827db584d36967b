#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"
#include "traces/column_mapping.hpp"

namespace meshsim::traces {

using engine::SimTime;

// A trace file and how to read it.
struct TraceFileSpec {
  std::string path;
  TraceFormat format = TraceFormat::kAzureCsv;
  ColumnMapping columns;  // used by the generic formats only
};

// How request arrivals are spread in time.
struct ArrivalSpec {
  enum class Kind {
    kPoisson,  // exponential gaps at rate_per_s
    kGamma,    // Gamma gaps with mean 1/rate_per_s and coefficient of variation cv (>1 is bursty)
    kDiurnal,  // Poisson whose rate follows rate_per_s * (1 + amplitude * sin(2 pi t / period_s + phase))
    kConstant, // evenly spaced, 1 / rate_per_s apart (a load generator's constant rate)
  };
  Kind kind = Kind::kPoisson;
  double rate_per_s = 1.0;
  double cv = 1.0;
  double amplitude = 0.5;         // in [0, 1]
  double period_s = 86'400.0;     // one day
  double phase_rad = 0.0;
};

// A distribution of token counts.
struct LengthSpec {
  enum class Kind {
    kFixed,      // always `value`
    kUniform,    // integers uniform in [min, max]
    kQuantiles,  // an empirical inverse CDF: (probability, tokens) points from p = 0 to p = 1,
                 // interpolated linearly (how fitted trace statistics are kept)
  };
  Kind kind = Kind::kFixed;
  std::uint32_t value = 1;
  std::uint32_t min = 1;
  std::uint32_t max = 1;
  std::vector<std::pair<double, double>> quantiles;
};

// One load stage: arrivals at `rate_per_s` (the arrival kind's law) for `duration`.
struct LoadStage {
  double rate_per_s = 1.0;
  SimTime duration;
};

// inference-perf's shared_prefix workload: `system_prompts` system prompts of
// `system_prompt_tokens` tokens, each shared by `users_per_system_prompt` users; each
// request comes from a user drawn uniformly and carries its system prompt, then (with
// `multi_turn`) the user's earlier turns, questions and answers, then a new question
// (prompt_tokens' law). Its prompt names those runs, so prefix caching can share them.
struct SharedPrefixSpec {
  std::uint32_t system_prompts = 1;
  std::uint32_t users_per_system_prompt = 1;
  std::uint32_t system_prompt_tokens = 100;
  bool multi_turn = false;
  // With multi_turn: a user's conversation starts afresh after this many turns (0: at 256
  // turns, or before its prompt would pass 2^24 tokens).
  std::uint32_t turns_per_conversation = 0;
};

// A synthetic workload: arrivals, lengths, and when to stop (whichever limit comes first).
struct GeneratorSpec {
  std::string name = "generator";
  ArrivalSpec arrivals;
  // When given, arrivals run through these stages back to back (each at its own rate, the
  // arrivals' kind), in place of arrivals.rate_per_s, and the workload ends with them.
  std::vector<LoadStage> stages;
  LengthSpec prompt_tokens;  // with shared_prefix: the question
  LengthSpec output_tokens;
  std::optional<SharedPrefixSpec> shared_prefix;
  std::optional<std::uint64_t> requests;
  std::optional<SimTime> duration;
};

// Where a ServeGen workload's request lengths come from: each client's own per-window
// distributions (chunk-N-dataset.json beside its window file; a client without one draws
// from all clients' lengths pooled, weighted by their requests), or one length model for
// every request (prompt_tokens, output_tokens).
enum class ServeGenLengths { kClients, kModel };
inline constexpr EnumNames kServeGenLengthsNames{std::array{std::pair{ServeGenLengths::kClients, std::string_view("clients")},
                                                            std::pair{ServeGenLengths::kModel, std::string_view("model")}}};

// Real multi-day load from ServeGen's per-client window files (traces/servegen_source.hpp).
struct ServeGenSpec {
  std::string path;          // a folder of chunk-N-trace.csv files, or one such file
  double load_scale = 1.0;   // multiplies every window's rate, keeping the time axis
  ServeGenLengths lengths = ServeGenLengths::kClients;
  LengthSpec prompt_tokens;  // with lengths kModel
  LengthSpec output_tokens;
  // Classes of service by client: each named client's requests (its window file's name
  // without "-trace.csv": "chunk-3") fall into its class, every other client's into
  // `other_class`, or, without one, an unnamed client is refused. Empty: not by client.
  std::vector<std::pair<std::string, std::uint8_t>> client_classes;
  std::optional<std::uint8_t> other_class;
};

// The load scales a ServeGen workload accepts: beyond 100 one window of the busiest client
// holds 10^8 requests.
inline constexpr double kMaxLoadScale = 100.0;
// The highest request rate a ServeGen window file may give one client (requests/s).
inline constexpr double kMaxWindowRate = 1e5;

// The rate scales a workload accepts: beyond them arrival times leave the simulated range
// (or collapse onto one microsecond).
inline constexpr double kMinRateScale = 1e-6;
inline constexpr double kMaxRateScale = 1e6;
inline bool rate_scale_in_range(double scale) { return scale >= kMinRateScale && scale <= kMaxRateScale; }
inline std::string rate_scale_range() { return "[1e-06, 1e+06]"; }

// Where requests come from, and what is done to their times.
struct WorkloadSpec {
  using Source = std::variant<TraceFileSpec, GeneratorSpec, ServeGenSpec>;
  Source source;
  // Arrival offsets are cut to [window_start, window_end) on the source's own time axis,
  // shifted so the window starts at 0, then divided by rate_scale (2.0 = twice the rate).
  SimTime window_start = SimTime::zero();
  std::optional<SimTime> window_end;
  double rate_scale = 1.0;
  std::optional<std::uint64_t> max_requests;
  // At most this many requests in the system at once (replay::ReplayOptions' rule).
  std::optional<std::uint32_t> max_concurrency;
  // Classes of service drawn by share (ClassShareSource), in the scenario's order; empty
  // when there are no classes or the trace names each request's (ColumnMapping).
  std::vector<double> class_shares;
  // How many classes of service the scenario has (0: none). Kept beside the workload so a
  // workload swapped in later (--trace, a sweep's traces) is checked to still name them.
  std::size_t class_count = 0;
};

}  // namespace meshsim::traces
