#include "traces/trace_stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace meshsim::traces {
namespace {

// Quantile by linear interpolation between order statistics (Hyndman-Fan type 7).
double quantile(const std::vector<std::uint32_t>& sorted, double p) {
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double t = position - static_cast<double>(lower);
  return sorted[lower] + t * (static_cast<double>(sorted[upper]) - sorted[lower]);
}

LengthSpec quantile_table(std::vector<std::uint32_t>& values) {
  std::sort(values.begin(), values.end());
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::kQuantiles;
  for (const double p : kFitProbabilities) {
    // Rounded to 0.1 token: the table is a config file people read.
    spec.quantiles.emplace_back(p, std::round(quantile(values, p) * 10.0) / 10.0);
  }
  return spec;
}

double mean(const std::vector<std::uint32_t>& values) {
  double sum = 0;
  for (const auto v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace

Expected<TraceStatistics> summarize(RequestSource& source) {
  std::vector<std::uint32_t> prompts;
  std::vector<std::uint32_t> outputs;
  double gap_sum = 0;
  double gap_sum_sq = 0;
  std::optional<SimTime> previous;
  TraceStatistics stats;
  for (;;) {
    auto next = source.next();
    if (!next) return next.error();
    if (!next->has_value()) break;
    const TraceRequest& request = **next;
    if (previous) {
      const double gap = (request.arrival - *previous).seconds();
      gap_sum += gap;
      gap_sum_sq += gap * gap;
    }
    previous = request.arrival;
    stats.duration_s = request.arrival.seconds();
    prompts.push_back(request.prompt_tokens);
    outputs.push_back(request.output_tokens);
  }
  if (prompts.size() < 2) return Error{source.describe() + ": at least two requests are needed to fit a workload"};
  if (gap_sum <= 0) {
    return Error{source.describe() + ": every request arrives at the same time, so no arrival rate can be fitted"};
  }
  stats.requests = prompts.size();
  const double gaps = static_cast<double>(stats.requests - 1);
  const double gap_mean = gap_sum / gaps;
  stats.rate_per_s = gap_mean > 0 ? 1.0 / gap_mean : 0.0;
  const double variance = std::max(0.0, gap_sum_sq / gaps - gap_mean * gap_mean);
  stats.interarrival_cv = gap_mean > 0 ? std::sqrt(variance) / gap_mean : 0.0;
  stats.prompt_mean = mean(prompts);
  stats.output_mean = mean(outputs);
  stats.prompt_tokens = quantile_table(prompts);
  stats.output_tokens = quantile_table(outputs);
  return stats;
}

GeneratorSpec fit_generator(const TraceStatistics& stats, std::string name) {
  GeneratorSpec spec;
  spec.name = std::move(name);
  spec.arrivals.kind = ArrivalSpec::Kind::kGamma;
  spec.arrivals.rate_per_s = stats.rate_per_s;
  spec.arrivals.cv = stats.interarrival_cv;
  spec.prompt_tokens = stats.prompt_tokens;
  spec.output_tokens = stats.output_tokens;
  spec.requests = stats.requests;
  return spec;
}

}  // namespace meshsim::traces
