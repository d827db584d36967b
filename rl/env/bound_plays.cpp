#include "rl/env/bound_plays.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "rl/env/right_sizing.hpp"
#include "sim/run/slo_capacity.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::rl {

namespace {
using engine::SimTime;

// A stretch of a window's played time, [from_s, from_s + length_s), and its requests at
// the window's own rate.
struct Stretch {
  double from_s = 0, length_s = 0;
  std::uint64_t requests = 0;
};

// The stretch's requests at the window's rate, compressed by `rate` (one window for every
// rate probed: the same requests, its end exact).
run::ProbeRequests stretch_requests(const traces::SharedWorkload& workload, const EvalWindow& window,
                                    const Stretch& stretch) {
  const SimTime start = SimTime::from_seconds(window.start_s + stretch.from_s * window.rate_scale);
  const SimTime length = SimTime::from_seconds(stretch.length_s);
  return [&workload, start, length, scale = window.rate_scale](double rate) -> std::unique_ptr<traces::RequestSource> {
    return std::make_unique<traces::ShapedSource>(workload->window(start, length, scale), SimTime::zero(), std::nullopt,
                                                  rate, std::nullopt, traces::EmptyWindow::kAllow);
  };
}

// What `n` instances sustain on `stretch` of `window` (requests per second at the
// window's own rate), and their drain there, the search starting at `guess` requests/s
// (a neighbouring stretch's answer: 0 for none).
struct StretchProbe {
  double sustained = 0.0;
  std::optional<double> drain_s;
  bool below_target = false;
  std::uint64_t replays = 0;
  std::string error;
};

StretchProbe probe_stretch(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                           const traces::SharedWorkload& workload, const EvalWindow& window, const Stretch& stretch,
                           std::uint32_t n, double guess) {
  StretchProbe out;
  run::SloCapacityQuestion question;
  question.config = config;
  for (auto& group : std::get<configs::LlmServingSpec>(question.config.serving).start_state) group.count = n;
  question.config.replay.until.reset();  // every request served
  question.target = config.rl->slo_target;
  const double own_rate = static_cast<double>(stretch.requests) / stretch.length_s;
  question.start_rate = guess > 0 ? std::clamp(guess / own_rate, 1e-3, 1e3) : 1.0;
  question.lowest_rate = 1e-3;
  question.highest_rate = 1e3;
  question.precision = 0.05;
  question.search = {1, guess > 0 ? 1.25 : 2.0};  // a bisection (the sizes run side by side)
  question.warmup = SimTime::from_seconds(std::min(60.0, 0.1 * stretch.length_s));
  question.requests = stretch_requests(workload, window, stretch);
  run::SloCapacity found = run::slo_capacity(question, catalog);
  if (found.error.empty() && !found.rate_scale) {
    // No load meets the target: the highest within a point of the best it reaches (the
    // lightest load probed).
    double best = 0.0;
    for (const run::SloProbe& p : found.probes) best = std::max(best, p.attainment);
    question.target = std::max(0.0, best - 0.01);
    out.replays += found.probes.size();
    found = run::slo_capacity(question, catalog);
    out.below_target = true;
  }
  out.replays += found.probes.size();
  out.error = found.error;
  if (!found.error.empty() || !found.rate_scale) return out;
  const run::SloProbe& at = *found.at_answer();
  out.sustained = *found.rate_scale * own_rate;
  out.drain_s = std::max(0.0, at.e2e_p50_s - at.ttft_p50_s);
  return out;
}

// The misses of pools of 1, 2, ... instances on `stretch` at its own rate (see
// MeasuredCapacity::misses): up to the first size missing nothing, or past the size
// `curve` sustains the stretch's rate at to the first where one more instance removes
// misses of fewer than kLeastGain of its requests (a floor of requests no pool serves in
// time), never past `most`. Past the target, so the priced bound reaches the SLOs above
// it a policy holds.
constexpr double kLeastGain = 0.0005;
struct MissProbe {
  std::vector<double> misses;
  std::uint64_t replays = 0;
  std::string error;
};

MissProbe probe_misses(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                       const traces::SharedWorkload& workload, const EvalWindow& window, const Stretch& stretch,
                       const CapacityCurve& curve, std::uint32_t most) {
  MissProbe out;
  configs::ScenarioConfig sized = config;
  // A backlog still waiting two minutes after the stretch is a miss already; serving it
  // to the end would only make an overloaded probe slow.
  sized.replay.until = SimTime::from_seconds(stretch.length_s + 120.0);
  const auto requests = stretch_requests(workload, window, stretch);
  const SimTime warmup = SimTime::from_seconds(std::min(60.0, 0.1 * stretch.length_s));
  const double rate = static_cast<double>(stretch.requests) / stretch.length_s;
  // Past the size the curve sustains the rate at, more instances only help by less; where
  // no size sustains any load, the misses are a floor from one instance on.
  const std::uint32_t sustaining = curve.at(most) > 0 ? fewest_sustaining(curve, rate, 1.0, 1, most) : 1;
  for (std::uint32_t n = 1; n <= most; ++n) {
    for (auto& group : std::get<configs::LlmServingSpec>(sized.serving).start_state) group.count = n;
    const run::SloProbe p = run::probe_slo(sized, catalog, 1.0, requests, warmup);
    ++out.replays;
    if (!p.error.empty()) {
      out.error = p.error;
      return out;
    }
    const double missed = p.judged > 0 ? (1.0 - p.attainment) * static_cast<double>(stretch.requests) : 0.0;
    const bool no_help = n > sustaining && out.misses.back() - missed < kLeastGain * static_cast<double>(stretch.requests);
    out.misses.push_back(missed);
    if (missed == 0 || no_help) break;
  }
  return out;
}

// The stretch each decision interval's middle falls in.
std::size_t stretch_of(const configs::RlSpec& spec, const MeasuredCapacity& capacity, std::size_t t) {
  const double at = spec.warmup.seconds() + (static_cast<double>(t) + 0.5) * spec.decision_interval.seconds();
  return std::min(capacity.curves.size() - 1, static_cast<std::size_t>(at / capacity.grid_s));
}

// How many of an episode's `intervals` decisions fall in each stretch.
std::vector<std::size_t> intervals_per_stretch(const configs::RlSpec& spec, const MeasuredCapacity& capacity,
                                               std::size_t intervals) {
  std::vector<std::size_t> count(capacity.curves.size(), 0);
  for (std::size_t t = 0; t < intervals && !count.empty(); ++t) ++count[stretch_of(spec, capacity, t)];
  return count;
}

// The size of `stretch` minimising its instance-intervals (`intervals` of them) plus
// `price` per miss, at least `at_least` (a size past those measured misses as the largest
// measured does, so it is never cheaper).
std::uint32_t priced_size(const std::vector<double>& misses, std::size_t intervals, double price,
                          std::uint32_t at_least) {
  if (misses.empty()) return at_least;
  std::uint32_t best = at_least;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::uint32_t n = at_least; n <= std::max<std::size_t>(at_least, misses.size()); ++n) {
    const double missed = misses[std::min<std::size_t>(n, misses.size()) - 1];
    const double cost = static_cast<double>(n) * static_cast<double>(intervals) + price * missed;
    if (cost < best_cost) {
      best_cost = cost;
      best = n;
    }
  }
  return best;
}

}  // namespace

double MeasuredCapacity::mean_sustained(std::uint32_t n) const {
  double sum = 0.0;
  std::size_t counted = 0;
  for (const CapacityCurve& curve : curves) {
    if (curve.sizes.empty()) continue;
    sum += curve.at(n);
    ++counted;
  }
  return counted > 0 ? sum / static_cast<double>(counted) : 0.0;
}

MeasuredCapacity measure_capacity(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                  const traces::SharedWorkload& workload, const EvalWindow& window,
                                  engine::ThreadPool& pool, double grid_s) {
  MeasuredCapacity out;
  out.grid_s = grid_s;
  // The episode plays its warm-up and its decisions; the stretches cover all of it.
  const configs::RlSpec& spec = *config.rl;
  const double played = spec.warmup.seconds() +
                        std::ceil(window.length_s / spec.decision_interval.seconds() - 1e-9) *
                            spec.decision_interval.seconds();
  std::vector<Stretch> stretches(static_cast<std::size_t>(std::max(1.0, std::ceil(played / grid_s - 1e-9))));
  pool.for_each(stretches.size(), [&](std::size_t k) {
    Stretch& s = stretches[k];
    s.from_s = static_cast<double>(k) * grid_s;
    s.length_s = std::min(grid_s, played - s.from_s);
    auto source = workload->window(SimTime::from_seconds(window.start_s + s.from_s * window.rate_scale),
                                   SimTime::from_seconds(s.length_s), window.rate_scale);
    for (auto next = source->next(); next && next->has_value(); next = source->next()) ++s.requests;
  });
  // A chain of stretches per size, side by side: each search starts from the stretch
  // before's answer (rates move little between neighbours).
  constexpr std::size_t kSizes = std::size(kCapacitySizes);
  std::vector<StretchProbe> probes(stretches.size() * kSizes);
  pool.for_each(kSizes, [&](std::size_t j) {
    double guess = 0.0;
    for (std::size_t k = 0; k < stretches.size(); ++k) {
      if (stretches[k].requests == 0) continue;
      StretchProbe& p = probes[k * kSizes + j];
      p = probe_stretch(config, catalog, workload, window, stretches[k], kCapacitySizes[j], guess);
      if (!p.error.empty()) return;
      if (p.sustained > 0) guess = p.sustained;
    }
  });
  double drain_sum = 0.0;
  std::size_t drains = 0;
  out.curves.resize(stretches.size());
  for (std::size_t k = 0; k < stretches.size(); ++k) {
    if (stretches[k].requests == 0) continue;  // nothing to serve there: the fewest
    for (std::size_t j = 0; j < kSizes; ++j) {
      const StretchProbe& p = probes[k * kSizes + j];
      out.replays += p.replays;
      if (!p.error.empty()) {
        out.error = p.error;
        return out;
      }
      out.below_target += p.below_target;
      out.curves[k].sizes.push_back(kCapacitySizes[j]);
      out.curves[k].sustained.push_back(p.sustained);
      if (j == 0 && p.drain_s) {
        drain_sum += *p.drain_s;
        ++drains;
      }
    }
  }
  out.drain_s = drains > 0 ? drain_sum / static_cast<double>(drains) : 0.0;
  // Each stretch's misses at the sizes below its capacity, side by side.
  const std::uint32_t most = std::max<std::uint32_t>(1, config.scaling.manager.max_total_instances);
  std::vector<MissProbe> misses(stretches.size());
  pool.for_each(stretches.size(), [&](std::size_t k) {
    if (stretches[k].requests > 0) {
      misses[k] = probe_misses(config, catalog, workload, window, stretches[k], out.curves[k], most);
    }
  });
  for (MissProbe& m : misses) {
    out.replays += m.replays;
    if (!m.error.empty()) {
      out.error = m.error;
      return out;
    }
    out.misses.push_back(std::move(m.misses));
  }
  return out;
}

StretchCapacity measure_stretch(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                const traces::SharedWorkload& workload, double start_s, double length_s) {
  StretchCapacity out;
  const EvalWindow window{"stretch", start_s, length_s, 1.0};
  Stretch stretch{0.0, length_s, 0};
  auto source = workload->window(SimTime::from_seconds(start_s), SimTime::from_seconds(length_s), 1.0);
  for (auto next = source->next(); next && next->has_value(); next = source->next()) ++stretch.requests;
  out.requests = stretch.requests;
  if (stretch.requests == 0) return out;
  double per_instance = 0.0;  // each size's search starts from the smaller one's answer per instance
  for (const std::uint32_t n : kCapacitySizes) {
    const StretchProbe p = probe_stretch(config, catalog, workload, window, stretch, n, per_instance * n);
    out.replays += p.replays;
    if (!p.error.empty()) {
      out.error = p.error;
      return out;
    }
    out.below_target.push_back(p.below_target);
    out.curve.sizes.push_back(n);
    out.curve.sustained.push_back(p.sustained);
    if (p.sustained > 0) per_instance = p.sustained / n;
  }
  return out;
}

std::vector<double> interval_rates(const configs::RlSpec& spec, const traces::EpisodeWorkload& workload,
                                   const EvalWindow& window) {
  const double interval = spec.decision_interval.seconds();
  const auto steps = static_cast<std::size_t>(std::max(1.0, std::ceil(window.length_s / interval - 1e-9)));
  std::vector<double> rates(steps, 0.0);
  const SimTime warmup = spec.warmup;
  const SimTime length = warmup + SimTime::from_us(spec.decision_interval.us() * static_cast<std::int64_t>(steps));
  auto source = workload.window(SimTime::from_seconds(window.start_s), length, window.rate_scale);
  for (;;) {
    auto next = source->next();
    if (!next || !*next) break;  // the environment's play reports a workload's errors
    const double at = ((*next)->arrival - warmup).seconds();
    if (at < 0) continue;
    const auto t = static_cast<std::size_t>(at / interval);
    if (t < steps) rates[t] += 1.0 / interval;
  }
  return rates;
}

const char* bound_name(BoundForm form) {
  switch (form) {
    case BoundForm::kHindsight: return "bound_hindsight";
    case BoundForm::kSmoothed: return "bound_smoothed";
    case BoundForm::kPriced: return "bound_priced";
  }
  return "";
}

std::vector<double> miss_prices(const configs::ScenarioConfig& config, const MeasuredCapacity& capacity,
                                std::size_t intervals, std::size_t count) {
  // As the price rises, a stretch's cheapest size walks up the lower convex hull of its
  // (size, misses) points from the fewest allowed: from n to the m past it where the
  // price of the misses removed first pays for the instance-intervals added.
  const std::uint32_t at_least = std::max<std::uint32_t>(1, config.scaling.manager.min_instances_per_pool);
  const std::vector<std::size_t> per_stretch = intervals_per_stretch(*config.rl, capacity, intervals);
  std::vector<double> changes;
  for (std::size_t k = 0; k < capacity.misses.size() && k < per_stretch.size(); ++k) {
    const std::vector<double>& m = capacity.misses[k];
    const auto interval_count = static_cast<double>(per_stretch[k]);
    for (std::size_t n = at_least; n < m.size() && interval_count > 0;) {
      std::size_t next = n;
      double price = std::numeric_limits<double>::infinity();
      for (std::size_t up = n + 1; up <= m.size(); ++up) {
        if (!(m[up - 1] < m[n - 1])) continue;
        const double at = static_cast<double>(up - n) * interval_count / (m[n - 1] - m[up - 1]);
        if (at <= price) {
          price = at;
          next = up;
        }
      }
      if (next == n) break;
      changes.push_back(price);
      n = next;
    }
  }
  if (changes.empty() || count == 0) return {};
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  std::vector<double> prices{0.0};  // the fewest instances throughout: the front's cheapest end
  for (std::size_t j = 0; j + 1 < count; ++j) {
    const double q = (static_cast<double>(j) + 0.5) / static_cast<double>(count - 1);
    const std::size_t i = std::min(changes.size() - 1, static_cast<std::size_t>(q * changes.size()));
    // Between this change and the next (a tie keeps the smaller size): every change up to
    // it made, none after.
    const double price = i + 1 < changes.size() ? 0.5 * (changes[i] + changes[i + 1]) : 1.01 * changes[i];
    if (price > prices.back()) prices.push_back(price);
  }
  return prices;
}

std::vector<std::uint32_t> bound_schedule(const configs::ScenarioConfig& config, const std::vector<double>& rates,
                                          const MeasuredCapacity& capacity, double parameter, BoundForm form,
                                          double delay_s, std::uint32_t start) {
  const configs::RlSpec& spec = *config.rl;
  const double interval = spec.decision_interval.seconds();
  if (capacity.curves.empty()) return {};
  const std::uint32_t at_least = std::max<std::uint32_t>(1, config.scaling.manager.min_instances_per_pool);
  const std::uint32_t most = std::max(at_least, config.scaling.manager.max_total_instances);
  RightSizingProblem problem;
  if (form == BoundForm::kPriced) {
    const std::vector<std::size_t> per_stretch = intervals_per_stretch(spec, capacity, rates.size());
    std::vector<std::uint32_t> sizes(capacity.curves.size(), at_least);
    for (std::size_t k = 0; k < sizes.size() && k < capacity.misses.size(); ++k) {
      sizes[k] = std::min(most, priced_size(capacity.misses[k], per_stretch[k], parameter, at_least));
    }
    for (std::size_t t = 0; t < rates.size(); ++t) problem.need.push_back(sizes[stretch_of(spec, capacity, t)]);
  } else {
    const auto minute = static_cast<std::size_t>(std::max(1.0, std::round(60.0 / interval)));
    const std::vector<double> load = form == BoundForm::kHindsight ? rates : centred_mean(rates, minute);
    for (std::size_t t = 0; t < load.size(); ++t) {
      const CapacityCurve& curve = capacity.curves[stretch_of(spec, capacity, t)];
      problem.need.push_back(curve.sizes.empty() ? at_least
                                                 : fewest_sustaining(curve, load[t], parameter, at_least, most));
    }
  }
  problem.lead = static_cast<std::uint32_t>(std::ceil(delay_s / interval - 1e-9));
  problem.start = start;
  const double action_price = spec.reward.cost_weight > 0 ? spec.reward.churn_weight / spec.reward.cost_weight : 0.0;
  problem.up_cost = action_price;
  problem.down_cost = action_price + capacity.drain_s / interval;
  std::vector<std::uint32_t> held = right_size(problem);
  for (std::uint32_t& n : held) n = std::min(n, config.scaling.manager.max_total_instances);
  return held;
}

Outcome play_schedule(const std::string& policy, double parameter, const configs::ScenarioConfig& config,
                      const configs::Catalog& catalog, const traces::SharedWorkload& workload, const EvalWindow& window,
                      double delay_s, std::uint32_t start, std::uint64_t seed, const std::vector<std::uint32_t>& sizes) {
  if (sizes.empty()) {
    Outcome o;
    o.policy = policy;
    o.parameter = parameter;
    o.error = "an empty schedule";
    return o;
  }
  Contender c{policy, parameter, config, false, nullptr};
  c.config.autoscaler = configs::AutoscalerSpec{};
  configs::RlSpec& rl = *c.config.rl;
  rl.action = configs::ActionKind::kTarget;
  rl.target_max_instances = config.scaling.manager.max_total_instances;
  rl.target_max_step = config.scaling.manager.max_total_instances;
  std::size_t decision = 0;
  const Actor follow = [&](std::span<const float>, std::span<float> action) {
    if (action.size() != 1) return;  // left NaN: play() reports the scenario's pools below
    action[0] = static_cast<float>(sizes[std::min(decision, sizes.size() - 1)]);
    ++decision;
  };
  c.actor = &follow;
  Outcome o = play(c, catalog, workload, window, delay_s, start, seed);
  if (o.error.empty() && decision == 0) o.error = "the bound schedules one pool; this scenario has several";
  return o;
}

}  // namespace meshsim::rl
