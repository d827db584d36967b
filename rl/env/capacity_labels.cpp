#include "rl/env/capacity_labels.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/number_text.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::rl {

namespace {

// The mean and 90th percentile (nearest rank) of `values` (0 for none); reorders them.
std::pair<double, double> mean_and_p90(std::vector<double>& values) {
  if (values.empty()) return {0.0, 0.0};
  double sum = 0.0;
  for (const double v : values) sum += v;
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(values.size()))) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
  return {sum / static_cast<double>(values.size()), values[rank]};
}

}  // namespace

autoscale::WorkFigures work_figures(std::span<const traces::TraceRequest> requests, double length_s) {
  autoscale::WorkFigures f;
  if (requests.empty()) return f;
  std::vector<double> prompts, outputs;
  const auto seconds = static_cast<std::size_t>(std::max(1.0, std::floor(length_s)));
  std::vector<double> per_second(seconds, 0.0);
  for (const traces::TraceRequest& r : requests) {
    prompts.push_back(r.prompt_tokens);
    outputs.push_back(r.output_tokens);
    const double at = std::max(0.0, r.arrival.seconds() - requests.front().arrival.seconds());
    per_second[std::min(seconds - 1, static_cast<std::size_t>(at))] += 1.0;
  }
  std::tie(f.prompt_mean, f.prompt_p90) = mean_and_p90(prompts);
  std::tie(f.output_mean, f.output_p90) = mean_and_p90(outputs);
  double mean = 0.0, square = 0.0;
  for (const double c : per_second) mean += c;
  mean /= static_cast<double>(seconds);
  for (const double c : per_second) square += (c - mean) * (c - mean);
  f.burstiness = square / static_cast<double>(seconds) / mean;
  return f;
}

std::vector<double> pick_stretches(const std::vector<configs::TimeSpan>& spans, double grid_s, std::size_t count,
                                   std::uint64_t seed) {
  std::vector<double> starts;
  for (const configs::TimeSpan& span : spans) {
    for (double k = std::ceil(span.from_s / grid_s - 1e-9); (k + 1) * grid_s <= span.to_s + 1e-9; k += 1) {
      starts.push_back(k * grid_s);
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (starts.size() <= count) return starts;
  // A partial Fisher-Yates draw on meshsim's own generator (the same on every platform).
  engine::Rng rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    std::swap(starts[i], starts[i + rng.uniform_int(starts.size() - i)]);
  }
  starts.resize(count);
  std::sort(starts.begin(), starts.end());
  return starts;
}

Expected<std::vector<CapacityLabel>> label_stretches(const configs::ScenarioConfig& config,
                                                     const configs::Catalog& catalog,
                                                     const traces::SharedWorkload& workload,
                                                     const std::vector<double>& starts, double length_s,
                                                     engine::ThreadPool& pool) {
  std::vector<CapacityLabel> labels(starts.size());
  pool.for_each(starts.size(), [&](std::size_t i) {
    CapacityLabel& label = labels[i];
    label.start_s = starts[i];
    label.length_s = length_s;
    std::vector<traces::TraceRequest> requests;
    auto source = workload->window(engine::SimTime::from_seconds(starts[i]), engine::SimTime::from_seconds(length_s), 1.0);
    for (auto next = source->next(); next && next->has_value(); next = source->next()) requests.push_back(**next);
    label.work = work_figures(requests, length_s);
    label.capacity = measure_stretch(config, catalog, workload, starts[i], length_s);
  });
  for (const CapacityLabel& label : labels) {
    if (!label.capacity.error.empty()) {
      return Error{"the stretch at " + number_text(label.start_s) + " s: " + label.capacity.error};
    }
  }
  return labels;
}

std::vector<autoscale::CapacitySample> capacity_samples(const std::vector<CapacityLabel>& labels,
                                                       std::uint64_t least_requests) {
  std::vector<autoscale::CapacitySample> samples;
  for (const CapacityLabel& label : labels) {
    if (label.capacity.requests < least_requests) continue;
    const CapacityCurve& curve = label.capacity.curve;
    for (std::size_t j = 0; j < curve.sizes.size(); ++j) {
      if (label.capacity.below_target[j] || !(curve.sustained[j] > 0)) continue;
      samples.push_back({label.work, curve.sizes[j], curve.sustained[j] / curve.sizes[j]});
    }
  }
  return samples;
}

}  // namespace meshsim::rl
