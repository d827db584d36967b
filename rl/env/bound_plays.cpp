#include "rl/env/bound_plays.hpp"

#include <algorithm>
#include <cmath>

#include "rl/env/right_sizing.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::rl {

namespace {
using engine::SimTime;

// The probe plays at most this long: long enough to average the length mix, short
// enough that its backlog (at most four times what it serves) stays small.
constexpr double kProbeSeconds = 1800.0;
// A probe is backlogged when it completes less than this share of what arrived.
constexpr double kBacklogged = 0.8;
}  // namespace

CapacityProbe probe_capacity(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                             const traces::SharedWorkload& workload, const EvalWindow& window, std::uint64_t seed) {
  CapacityProbe probe;
  const double length = std::min(window.length_s, kProbeSeconds);
  const Contender one{"static", kNoParameter, config, false, nullptr};
  double scale = window.rate_scale;
  for (int attempt = 0; attempt < 16; ++attempt) {
    // A fast rate walks further into the workload; past its end nothing arrives.
    EvalWindow w{"capacity", window.start_s, length, scale};
    w.length_s = std::min(length, (workload->span_s() - window.start_s) / scale);
    if (!(w.length_s >= config.rl->decision_interval.seconds())) break;
    const Outcome o = play(one, catalog, workload, w, config.scaling.manager.scale_up_delay.seconds(), 1, seed);
    if (!o.error.empty()) {
      probe.error = o.error;
      return probe;
    }
    if (o.arrived > 0 && static_cast<double>(o.completed) < kBacklogged * static_cast<double>(o.arrived)) {
      // The run lasts the warm-up and the window's decisions.
      const double seconds = config.rl->warmup.seconds() +
                             std::ceil(w.length_s / config.rl->decision_interval.seconds() - 1e-9) *
                                 config.rl->decision_interval.seconds();
      probe.requests_per_s = static_cast<double>(o.completed) / seconds;
      // The drain at half the capacity: what a request takes to finish on an instance
      // that keeps up, not on a saturated one.
      w.rate_scale = std::clamp(scale * 0.5 * probe.requests_per_s / (static_cast<double>(o.arrived) / seconds), 1e-6, 1e6);
      w.length_s = std::min(length, (workload->span_s() - window.start_s) / w.rate_scale);
      const Outcome moderate = play(one, catalog, workload, w, config.scaling.manager.scale_up_delay.seconds(), 1, seed);
      if (!moderate.error.empty()) {
        probe.error = moderate.error;
        return probe;
      }
      probe.drain_s = std::max(0.0, moderate.e2e_p50 - moderate.ttft_p50);
      return probe;
    }
    if (scale >= 1e6) break;
    scale = std::min(1e6, scale * 4);
  }
  probe.error = "one instance kept up with the window's requests at every rate tried (up to " + number_text(scale) +
                "x): no capacity measured";
  return probe;
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
  return form == BoundForm::kHindsight ? "bound_hindsight" : "bound_smoothed";
}

std::vector<std::uint32_t> bound_schedule(const configs::ScenarioConfig& config, const std::vector<double>& rates,
                                          const CapacityProbe& probe, double utilisation, BoundForm form,
                                          double delay_s, std::uint32_t start) {
  const configs::RlSpec& spec = *config.rl;
  const double interval = spec.decision_interval.seconds();
  const auto minute = static_cast<std::size_t>(std::max(1.0, std::round(60.0 / interval)));
  const std::vector<double> load = form == BoundForm::kHindsight ? rates : centred_mean(rates, minute);
  RightSizingProblem problem;
  problem.need = instances_needed(load, probe.requests_per_s, utilisation,
                                  std::max<std::uint32_t>(1, config.scaling.manager.min_instances_per_pool));
  problem.lead = static_cast<std::uint32_t>(std::ceil(delay_s / interval - 1e-9));
  problem.start = start;
  const double action_price = spec.reward.cost_weight > 0 ? spec.reward.churn_weight / spec.reward.cost_weight : 0.0;
  problem.up_cost = action_price;
  problem.down_cost = action_price + probe.drain_s / interval;
  std::vector<std::uint32_t> held = right_size(problem);
  const std::uint32_t most = config.scaling.manager.max_total_instances;
  for (std::uint32_t& n : held) n = std::min(n, most);
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
