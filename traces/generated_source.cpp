#include "traces/generated_source.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::traces {

Status validate_length(const LengthSpec& spec, const std::string& field) {
  switch (spec.kind) {
    case LengthSpec::Kind::kFixed:
      if (spec.value == 0) return Error{field + ".value: expected a positive token count"};
      return Ok{};
    case LengthSpec::Kind::kUniform:
      if (spec.min == 0 || spec.max < spec.min) {
        return Error{field + ": expected 0 < min <= max, got min " + std::to_string(spec.min) +
                     " and max " + std::to_string(spec.max)};
      }
      return Ok{};
    case LengthSpec::Kind::kQuantiles: {
      const auto& q = spec.quantiles;
      if (q.size() < 2 || q.front().first != 0.0 || q.back().first != 1.0) {
        return Error{field + ".quantiles: expected at least two [p, tokens] points from p = 0 to p = 1"};
      }
      for (std::size_t i = 0; i < q.size(); ++i) {
        if (!(q[i].second >= 1.0)) return Error{field + ".quantiles[" + std::to_string(i) + "]: tokens must be >= 1"};
        if (i > 0 && (q[i].first <= q[i - 1].first || q[i].second < q[i - 1].second)) {
          return Error{field + ".quantiles[" + std::to_string(i) +
                       "]: probabilities must increase and tokens must not decrease"};
        }
      }
      return Ok{};
    }
  }
  return Ok{};
}

Status validate(const GeneratorSpec& spec) {
  const auto& a = spec.arrivals;
  if (!(a.rate_per_s > 0) || !std::isfinite(a.rate_per_s)) return Error{"arrivals.rate_per_s: expected a positive rate"};
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const auto& stage = spec.stages[i];
    if (!(stage.rate_per_s > 0) || !std::isfinite(stage.rate_per_s)) {
      return Error{"stages[" + std::to_string(i) + "].rate_per_s: expected a positive rate"};
    }
    if (stage.duration <= SimTime::zero()) {
      return Error{"stages[" + std::to_string(i) + "].duration_s: expected a positive duration"};
    }
  }
  if (const auto& p = spec.shared_prefix) {
    if (p->system_prompts == 0 || p->users_per_system_prompt == 0 ||
        std::uint64_t{p->system_prompts} * p->users_per_system_prompt > kMaxSharedPrefixUsers) {
      return Error{"shared_prefix: expected system_prompts >= 1 and users_per_system_prompt >= 1, at most " +
                   std::to_string(kMaxSharedPrefixUsers) + " users in all"};
    }
  }
  if (a.kind == ArrivalSpec::Kind::kGamma && !(a.cv > 0)) return Error{"arrivals.cv: expected a positive coefficient of variation"};
  if (a.kind == ArrivalSpec::Kind::kDiurnal) {
    if (!(a.amplitude >= 0 && a.amplitude <= 1)) return Error{"arrivals.amplitude: expected a value in [0, 1]"};
    if (!(a.period_s > 0)) return Error{"arrivals.period_s: expected a positive period"};
  }
  if (!spec.requests && !spec.duration && spec.stages.empty()) {
    return Error{"expected a limit: 'requests', 'duration_s' or 'stages'"};
  }
  if (auto s = validate_length(spec.prompt_tokens, "prompt_tokens"); !s) return s;
  return validate_length(spec.output_tokens, "output_tokens");
}

std::uint32_t sample_length(const LengthSpec& spec, engine::Rng& rng) {
  switch (spec.kind) {
    case LengthSpec::Kind::kFixed:
      return spec.value;
    case LengthSpec::Kind::kUniform:
      return spec.min + static_cast<std::uint32_t>(rng.uniform_int(std::uint64_t{spec.max} - spec.min + 1));
    case LengthSpec::Kind::kQuantiles: {
      const auto& q = spec.quantiles;
      const double u = rng.uniform();
      const auto upper = std::upper_bound(q.begin(), q.end(), u,
                                          [](double p, const auto& point) { return p < point.first; });
      const auto hi = upper == q.end() ? q.end() - 1 : upper;
      const auto lo = hi - 1;
      const double t = (u - lo->first) / (hi->first - lo->first);
      const double tokens = lo->second + t * (hi->second - lo->second);
      return static_cast<std::uint32_t>(std::max(1.0, std::round(tokens)));
    }
  }
  return 1;
}

GeneratedSource::GeneratedSource(GeneratorSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)),
      arrival_rng_(engine::derive_seed(seed, "workload.arrivals")),
      length_rng_(engine::derive_seed(seed, "workload.lengths")),
      user_rng_(engine::derive_seed(seed, "workload.users")) {
  MESHSIM_CHECK(validate(spec_).has_value(), "GeneratedSource needs a validated spec");
  if (!spec_.stages.empty()) stage_end_s_ = spec_.stages.front().duration.seconds();
  if (spec_.shared_prefix && spec_.shared_prefix->multi_turn) {
    histories_.resize(std::size_t{spec_.shared_prefix->system_prompts} * spec_.shared_prefix->users_per_system_prompt);
  }
}

double GeneratedSource::next_gap_s(double rate_per_s) {
  const auto& a = spec_.arrivals;
  switch (a.kind) {
    case ArrivalSpec::Kind::kPoisson:
      return arrival_rng_.exponential(rate_per_s);
    case ArrivalSpec::Kind::kConstant:
      return 1.0 / rate_per_s;  // (advance_clock counts them from the stage's start)
    case ArrivalSpec::Kind::kGamma: {
      const double shape = 1.0 / (a.cv * a.cv);
      return arrival_rng_.gamma(shape, 1.0 / (rate_per_s * shape));
    }
    case ArrivalSpec::Kind::kDiurnal: {
      // Thinning (Lewis-Shedler): candidates at the peak rate, kept with rate(t) / peak.
      const double peak = rate_per_s * (1.0 + a.amplitude);
      double t = clock_s_;
      for (;;) {
        t += arrival_rng_.exponential(peak);
        const double rate =
            rate_per_s * (1.0 + a.amplitude * std::sin(2.0 * std::numbers::pi * t / a.period_s + a.phase_rad));
        if (arrival_rng_.uniform() * peak <= rate) return t - clock_s_;
      }
    }
  }
  return 0.0;
}

bool GeneratedSource::advance_clock() {
  const double rate = spec_.stages.empty() ? spec_.arrivals.rate_per_s : spec_.stages[stage_].rate_per_s;
  // Constant arrivals count from the stage's start, so no rounding accumulates.
  const double next = spec_.arrivals.kind == ArrivalSpec::Kind::kConstant
                          ? stage_start_s_ + static_cast<double>(in_stage_) / rate
                          : clock_s_ + next_gap_s(rate);
  if (spec_.stages.empty() || next < stage_end_s_) {
    clock_s_ = next;
    ++in_stage_;
    return true;
  }
  // The next stage's first request arrives as it begins.
  if (++stage_ == spec_.stages.size()) return false;
  clock_s_ = stage_start_s_ = stage_end_s_;
  stage_end_s_ += spec_.stages[stage_].duration.seconds();
  in_stage_ = 1;
  return true;
}

void GeneratedSource::fill_shared_prefix(TraceRequest& request, std::uint32_t question_tokens) {
  const SharedPrefixSpec& p = *spec_.shared_prefix;
  const std::uint64_t user =
      user_rng_.uniform_int(std::uint64_t{p.system_prompts} * p.users_per_system_prompt);
  const std::uint64_t system_prompt = user / p.users_per_system_prompt;
  if (p.system_prompt_tokens > 0) request.prefix.push_back({1 + system_prompt, p.system_prompt_tokens});
  std::uint64_t prompt = std::uint64_t{p.system_prompt_tokens} + question_tokens;
  if (p.multi_turn) {
    auto& history = histories_[user];
    std::uint64_t earlier = 0;
    for (const auto& turn : history) earlier += turn.tokens;
    const std::size_t turns = history.size() / 2;
    const bool conversation_over =
        (p.turns_per_conversation > 0 && turns >= p.turns_per_conversation) || turns >= kMaxConversationTurns;
    if (conversation_over || prompt + earlier + request.output_tokens > kMaxConversationTokens) {
      history.clear();
      earlier = 0;
    }
    request.prefix.insert(request.prefix.end(), history.begin(), history.end());
    prompt += earlier;
    // The question and answer are named: the user's next turn repeats them.
    const ContentSegment question{next_content_id_++, question_tokens};
    request.prefix.push_back(question);
    request.output_content = next_content_id_++;
    history.push_back(question);
    history.push_back({request.output_content, request.output_tokens});
  }
  request.prompt_tokens = static_cast<std::uint32_t>(prompt);
}

Expected<std::optional<TraceRequest>> GeneratedSource::next() {
  if (finished_ || (spec_.requests && generated_ >= *spec_.requests)) {
    finished_ = true;
    return std::optional<TraceRequest>();
  }
  // The first request arrives at 0, as a trace's first row does.
  if (generated_ > 0 && !advance_clock()) {
    finished_ = true;
    return std::optional<TraceRequest>();
  }
  const auto checked = SimTime::from_seconds_checked(clock_s_);
  if (!checked) {
    finished_ = true;
    return Error{"generator '" + spec_.name + "': request " + std::to_string(generated_) + " would arrive at " +
                 number_text(clock_s_) + " s, past the simulated time limit of 1e12 s (is arrivals.rate_per_s that low?)"};
  }
  const SimTime arrival = *checked;
  if (spec_.duration && arrival >= *spec_.duration) {
    finished_ = true;
    return std::optional<TraceRequest>();
  }
  TraceRequest request;
  request.id = generated_++;
  request.arrival = arrival;
  request.prompt_tokens = sample_length(spec_.prompt_tokens, length_rng_);
  request.output_tokens = sample_length(spec_.output_tokens, length_rng_);
  if (spec_.shared_prefix) fill_shared_prefix(request, request.prompt_tokens);
  return std::optional<TraceRequest>(std::move(request));
}

double GeneratedSource::progress() const {
  if (finished_) return 1.0;
  double fraction = 0.0;
  if (spec_.requests) fraction = static_cast<double>(generated_) / static_cast<double>(*spec_.requests);
  if (spec_.duration) fraction = std::max(fraction, clock_s_ / spec_.duration->seconds());
  if (!spec_.stages.empty()) {
    double total_s = 0.0;
    for (const auto& stage : spec_.stages) total_s += stage.duration.seconds();
    fraction = std::max(fraction, clock_s_ / total_s);
  }
  return std::min(1.0, fraction);
}

}  // namespace meshsim::traces
