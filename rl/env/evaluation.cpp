#include "rl/env/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "rl/env/scaling_env.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::rl {

std::vector<EvalWindow> tuning_windows(const configs::RlSpec& spec, double workload_span_s) {
  const double length = spec.episode_length.seconds();
  const double from = spec.windows_from_s;
  const double to = spec.windows_to_s.value_or(std::max(from, workload_span_s - length));
  std::vector<EvalWindow> windows;
  const std::uint32_t n = std::max<std::uint32_t>(1, spec.tuning_windows);
  for (std::uint32_t i = 0; i < n; ++i) {
    // Evenly spaced starts, the first at `from` and the last at `to`.
    const double start = n == 1 ? from : from + (to - from) * i / (n - 1);
    windows.push_back(EvalWindow{"tuning " + std::to_string(i + 1), start, length, 1.0});
  }
  return windows;
}

std::vector<EvalWindow> span_windows(const std::vector<configs::TimeSpan>& spans, const std::string& name) {
  std::vector<EvalWindow> windows;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    windows.push_back(EvalWindow{name + " " + std::to_string(i + 1), spans[i].from_s, spans[i].length_s(), 1.0});
  }
  return windows;
}

std::vector<double> trained_delays(const configs::ScenarioConfig& config) {
  std::vector<double> delays = config.rl ? config.rl->scale_up_delays_s : std::vector<double>{};
  if (delays.empty()) delays.push_back(config.scaling.manager.scale_up_delay.seconds());
  return delays;
}

std::string check_held_out(const configs::RlSpec& spec, const EvalWindow& window) {
  const configs::TimeSpan training = spec.training_span();
  const configs::TimeSpan covered = window.covers();
  if (!covered.overlaps(training)) return {};
  return "the window [" + number_text(covered.from_s) + ", " + number_text(covered.to_s) +
         ") s of the workload overlaps the training windows' [" + number_text(training.from_s) + ", " +
         (std::isinf(training.to_s) ? std::string("its end") : number_text(training.to_s)) + ")";
}

Outcome play(const Contender& contender, const configs::Catalog& catalog, const traces::SharedWorkload& workload,
             const EvalWindow& window, double delay_s, std::uint32_t start_instances, std::uint64_t seed) {
  Outcome o;
  o.policy = contender.policy;
  o.parameter = contender.parameter;
  o.start_instances = start_instances;
  configs::ScenarioConfig config = contender.config;
  configs::RlSpec& rl = *config.rl;
  rl.episode_length = engine::SimTime::from_seconds(window.length_s);
  // The one window played (reset names it too), so the environment's own check of its
  // training windows holds on any workload.
  rl.windows_from_s = window.start_s;
  rl.windows_to_s = window.start_s;
  auto env = ScalingEnv::create(config, catalog, workload, contender.autoscaler);
  if (!env) {
    o.error = env.error().message;
    return o;
  }
  ScalingEnv& e = **env;
  std::vector<float> obs(e.observation_size());
  std::vector<float> action(e.action_size(), std::numeric_limits<float>::quiet_NaN());
  e.reset(seed, obs, {window.start_s, window.rate_scale, delay_s, start_instances});
  double instance_sum = 0;
  for (;;) {
    if (contender.actor != nullptr) (*contender.actor)(obs, action);
    const StepResult step = e.step(action, obs);
    o.reward += step.reward;
    o.instances.push_back(step.info.mean_instances);
    instance_sum += step.info.mean_instances;
    o.gpu_hours = step.info.gpu_hours;
    if (step.truncated) break;
  }
  const auto& metrics = e.run().replay().metrics();
  // A request still waiting for its first token past the TTFT target when the window
  // ends has missed, whatever comes next: counted, so a backlog left behind is no saving.
  const std::uint64_t missed_in_flight =
      e.run().replay().serving().awaiting_first_token(e.run().now() - config.replay.slo.ttft).arrived_before;
  o.left = metrics.counts().judged() + missed_in_flight;
  o.arrived = metrics.counts().arrived;
  o.completed = metrics.counts().completed;
  o.slo_met = metrics.slo_met();
  o.slo_attainment = o.left == 0 ? 0.0 : static_cast<double>(o.slo_met) / static_cast<double>(o.left);
  const auto ttft = metrics.ttft(), tbt = metrics.tbt();
  o.ttft_p50 = ttft.p50;
  o.ttft_p99 = ttft.p99;
  o.tbt_p50 = tbt.p50;
  o.tbt_p99 = tbt.p99;
  o.e2e_p50 = metrics.e2e().p50;
  o.mean_instances = instance_sum / static_cast<double>(o.instances.size());
  const auto& counts = e.run().scaling()->manager().view().counts();
  o.scale_ups = counts.scale_ups;
  o.scale_downs = counts.scale_downs;
  o.hours = e.spec().episode_length.seconds() / 3600.0;
  o.actions_per_hour = static_cast<double>(o.scale_ups + o.scale_downs + counts.migrations) / o.hours;
  return o;
}

StaticPlays sweep_statics(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                          const traces::SharedWorkload& workload, const std::vector<EvalWindow>& windows,
                          std::uint32_t max_size, const std::function<bool(const StaticPlays&)>& enough,
                          engine::ThreadPool& pool) {
  StaticPlays by_size;
  const Contender contender{"static", kNoParameter, config, false, nullptr};
  for (std::uint32_t first = 1; first <= max_size;) {
    const std::uint32_t batch = std::min(pool.size(), max_size - first + 1);
    by_size.resize(by_size.size() + batch, std::vector<Outcome>(windows.size()));
    pool.for_each(std::size_t{batch} * windows.size(), [&](std::size_t i) {
      const std::uint32_t size = first + static_cast<std::uint32_t>(i / windows.size());
      Outcome& o = by_size[size - 1][i % windows.size()];
      o = play(contender, catalog, workload, windows[i % windows.size()], config.scaling.manager.scale_up_delay.seconds(),
               size, config.seed);
      o.parameter = size;
    });
    first += batch;
    bool stop = false;
    for (std::size_t k = 0; k < by_size.size(); ++k) {
      stop = stop || std::any_of(by_size[k].begin(), by_size[k].end(), [](const Outcome& o) { return !o.error.empty(); });
      if (!stop && k + 1 >= first - batch && enough(StaticPlays(by_size.begin(), by_size.begin() + k + 1))) {
        by_size.resize(k + 1);  // sizes past the first that is enough are not kept
        stop = true;
      }
    }
    if (stop) break;
  }
  return by_size;
}

bool reaches_target(const StaticPlays& so_far, double slo_target) {
  return !so_far.empty() && pooled(so_far.back()).slo_attainment >= slo_target;
}

bool front_saturated(const StaticPlays& so_far, double slo_target) {
  const std::size_t n = so_far.size();
  if (n < 3) return false;
  for (std::size_t w = 0; w < so_far.back().size(); ++w) {
    if (so_far[n - 1][w].slo_attainment < slo_target) return false;
    for (std::size_t k = n - 2; k < n; ++k) {
      if (so_far[k][w].slo_attainment - so_far[k - 1][w].slo_attainment >= 1e-4) return false;
    }
  }
  return true;
}

Expected<TunedStatic> tune_static_size(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                       const traces::SharedWorkload& workload, std::uint32_t max_size,
                                       engine::ThreadPool& pool) {
  const configs::RlSpec& spec = *config.rl;
  const auto plays = sweep_statics(
      config, catalog, workload, tuning_windows(spec, workload->span_s()), max_size,
      [&](const StaticPlays& so_far) { return reaches_target(so_far, spec.slo_target); }, pool);
  TunedStatic tuned;
  for (const auto& sized : plays) {
    tuned.sizes.push_back(pooled(sized));
    if (!tuned.sizes.back().error.empty()) {
      return Error{"static " + number_text(tuned.sizes.back().parameter) + ": " + tuned.sizes.back().error};
    }
  }
  tuned.size = static_cast<std::uint32_t>(pick(tuned.sizes, spec.slo_target) + 1);
  return tuned;
}

Outcome pooled(const std::vector<Outcome>& plays) {
  Outcome all;
  if (plays.empty()) return all;
  all.policy = plays.front().policy;
  all.parameter = plays.front().parameter;
  all.start_instances = plays.front().start_instances;
  double instance_hours = 0, actions = 0;
  for (const Outcome& o : plays) {
    if (!o.error.empty()) {
      all.error = o.error;
      return all;
    }
    all.left += o.left;
    all.slo_met += o.slo_met;
    all.arrived += o.arrived;
    all.completed += o.completed;
    all.gpu_hours += o.gpu_hours;
    all.reward += o.reward;
    all.hours += o.hours;
    all.scale_ups += o.scale_ups;
    all.scale_downs += o.scale_downs;
    instance_hours += o.mean_instances * o.hours;
    actions += o.actions_per_hour * o.hours;
    all.ttft_p50 = std::max(all.ttft_p50, o.ttft_p50);
    all.ttft_p99 = std::max(all.ttft_p99, o.ttft_p99);
    all.tbt_p50 = std::max(all.tbt_p50, o.tbt_p50);
    all.tbt_p99 = std::max(all.tbt_p99, o.tbt_p99);
  }
  all.slo_attainment = all.left == 0 ? 0.0 : static_cast<double>(all.slo_met) / static_cast<double>(all.left);
  all.mean_instances = all.hours > 0 ? instance_hours / all.hours : 0.0;
  all.actions_per_hour = all.hours > 0 ? actions / all.hours : 0.0;
  return all;
}

int pick(const std::vector<Outcome>& candidates, double slo_target) {
  std::vector<std::vector<Outcome>> each;
  for (const Outcome& c : candidates) each.push_back({c});
  return pick_per_recipe(each, {slo_target});
}

int pick_per_recipe(const std::vector<std::vector<Outcome>>& candidates, const std::vector<double>& slo_targets) {
  struct Score {
    bool failed = false;
    double shortfall = 0;  // the worst recipe's target - attainment (<= 0: every target held)
    double gpu_hours = 0;
  };
  std::vector<Score> scores;
  for (const std::vector<Outcome>& plays : candidates) {
    MESHSIM_CHECK(plays.size() == slo_targets.size(), "pick_per_recipe: a play per recipe");
    Score s{false, -std::numeric_limits<double>::infinity(), 0};
    for (std::size_t r = 0; r < plays.size(); ++r) {
      s.failed = s.failed || !plays[r].error.empty();
      s.shortfall = std::max(s.shortfall, slo_targets[r] - plays[r].slo_attainment);
      s.gpu_hours += plays[r].gpu_hours;
    }
    scores.push_back(s);
  }
  const auto better = [](const Score& a, const Score& b) {
    const bool a_meets = a.shortfall <= 0, b_meets = b.shortfall <= 0;
    if (a_meets != b_meets) return a_meets;
    if (!a_meets && a.shortfall != b.shortfall) return a.shortfall < b.shortfall;
    return a.gpu_hours < b.gpu_hours;
  };
  int best = -1;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (scores[i].failed) continue;
    if (best < 0 || better(scores[i], scores[static_cast<std::size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

namespace {

// Target tracking on `targets` (the first its metric, the rest `also`), up to the
// scaling limit, taking over the tuned static size.
void set_tracking(configs::ScenarioConfig& c, const std::vector<autoscale::TrackedTarget>& targets) {
  auto& t = c.autoscaler.target_tracking;
  c.autoscaler.policy = configs::AutoscalerPolicy::kTargetTracking;
  t.metric = targets.front().metric;
  t.target = targets.front().target;
  t.also.assign(targets.begin() + 1, targets.end());
  t.max_instances = c.scaling.manager.max_total_instances;
  t.warm_start = true;  // it takes over the tuned static size
}

}  // namespace

std::vector<BaselineFamily> adaptive_baselines(const BaselineGrids& grids) {
  using configs::AutoscalerPolicy;
  const auto tracking = [](std::string policy, const std::vector<double>& grid, autoscale::TrackedMetric metric) {
    return BaselineFamily{std::move(policy), grid,
                          [metric](configs::ScenarioConfig& c, double target) {
                            set_tracking(c, {{metric, target}});
                          },
                          metric};
  };
  std::vector<BaselineFamily> families{
      {"elastic", grids.elastic_capacities,
       [](configs::ScenarioConfig& c, double capacity) {
         c.autoscaler.policy = AutoscalerPolicy::kElastic;
         c.autoscaler.elastic.requests_per_worker_capacity = capacity;
         c.autoscaler.elastic.max_workers = c.scaling.manager.max_total_instances;
       }},
      tracking("target_tracking_kv", grids.kv_targets, autoscale::TrackedMetric::kKvUtilisation),
      tracking("target_tracking_requests", grids.request_targets, autoscale::TrackedMetric::kRequestsPerInstance),
      tracking("target_tracking_rate", grids.rate_targets, autoscale::TrackedMetric::kArrivalRate),
      tracking("target_tracking_tokens", grids.token_targets, autoscale::TrackedMetric::kTokenRate),
  };
  if (grids.capacity_model) {
    // Without the online correction (the default), and with it.
    for (const bool corrected : {false, true}) {
      families.push_back(
          {std::string(kCapacityTrackingPolicy) + (corrected ? "_corrected" : ""), grids.capacity_targets,
           [model = grids.capacity_model, path = grids.capacity_model_path, corrected](configs::ScenarioConfig& c,
                                                                                        double target) {
             set_tracking(c, {{autoscale::TrackedMetric::kCapacityUnits, target}});
             auto& t = c.autoscaler.target_tracking;
             t.capacity_model = model;
             t.capacity_model_path = path;
             t.capacity_correction = corrected;
             if (c.rl) t.miss_budget = 1.0 - c.rl->slo_target;
           }});
    }
  }
  return families;
}

BaselineFamily multi_metric_baseline(const std::vector<autoscale::TrackedTarget>& tuned,
                                     const std::vector<double>& scales) {
  return {"target_tracking_multi", scales, [tuned](configs::ScenarioConfig& c, double scale) {
            std::vector<autoscale::TrackedTarget> scaled = tuned;
            for (auto& t : scaled) t.target *= scale;
            set_tracking(c, scaled);
          }};
}

BaselineFamily oracle_bound(const BaselineGrids& grids) {
  return {"oracle", grids.oracle_utilisations, [](configs::ScenarioConfig& c, double utilisation) {
            c.autoscaler.policy = configs::AutoscalerPolicy::kOracle;
            c.autoscaler.oracle.target_utilisation = utilisation;
          }};
}

std::optional<double> front_gpu_hours(const std::vector<Outcome>& plays, double slo) {
  std::vector<std::pair<double, double>> front;  // (GPU-hours, SLO attainment), by GPU-hours
  for (const Outcome& o : plays) {
    if (o.error.empty()) front.emplace_back(o.gpu_hours, o.slo_attainment);
  }
  if (front.empty()) return std::nullopt;
  std::sort(front.begin(), front.end());
  for (std::size_t i = 1; i < front.size(); ++i) front[i].second = std::max(front[i].second, front[i - 1].second);
  if (slo <= front.front().second) return front.front().first;
  // Log miss rate, floored so a perfect play stays finite.
  const auto log_miss = [](double attainment) { return std::log(std::max(1e-9, 1.0 - attainment)); };
  for (std::size_t i = 1; i < front.size(); ++i) {
    const auto [g0, s0] = front[i - 1];
    const auto [g1, s1] = front[i];
    if (slo > s1) continue;
    const double x0 = log_miss(s0), x1 = log_miss(s1), x = log_miss(slo);
    const double share = x0 == x1 ? 1.0 : (x0 - x) / (x0 - x1);
    return g0 + share * (g1 - g0);
  }
  return std::nullopt;
}

std::optional<double> tracking_front_at(const Fronts& fronts, double slo) {
  // One front per target tracking metric; the cheapest at `slo`.
  std::vector<std::string> metrics;
  for (const Outcome& o : fronts.tracking) {
    if (std::find(metrics.begin(), metrics.end(), o.policy) == metrics.end()) metrics.push_back(o.policy);
  }
  std::optional<double> cheapest;
  for (const std::string& metric : metrics) {
    std::vector<Outcome> family;
    std::copy_if(fronts.tracking.begin(), fronts.tracking.end(), std::back_inserter(family),
                 [&](const Outcome& o) { return o.policy == metric; });
    const auto at = front_gpu_hours(family, slo);
    if (at && (!cheapest || *at < *cheapest)) cheapest = at;
  }
  return cheapest;
}

namespace {
// The bound's plays with full hindsight: sized by a utilisation of each interval's load,
// by the price of a miss, or constant.
std::optional<double> hindsight_bound_at(const Fronts& fronts, double slo) {
  std::vector<Outcome> plays = fronts.bound_hindsight;
  plays.insert(plays.end(), fronts.bound_priced.begin(), fronts.bound_priced.end());
  plays.insert(plays.end(), fronts.statics.begin(), fronts.statics.end());
  return front_gpu_hours(plays, slo);
}
}  // namespace

std::optional<double> bound_at(const Fronts& fronts, double slo) {
  const auto hindsight = hindsight_bound_at(fronts, slo);
  const auto smoothed = front_gpu_hours(fronts.bound_smoothed, slo);
  if (hindsight && smoothed) return std::min(*hindsight, *smoothed);
  return hindsight ? hindsight : smoothed;
}

std::vector<BoundDefect> bound_defects(const Fronts& fronts, const std::vector<const Outcome*>& plays) {
  std::vector<BoundDefect> defects;
  for (const Outcome* o : plays) {
    if (!o->error.empty()) continue;
    const auto bound = bound_at(fronts, o->slo_attainment);
    if (bound && o->gpu_hours < *bound) defects.push_back({o, *bound});
  }
  return defects;
}

Verdict judge(const Outcome& policy, const std::vector<Outcome>& tuned, const Fronts& fronts, double slo_target) {
  Verdict v;
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    const Outcome& o = tuned[i];
    if (!o.error.empty()) continue;
    const auto cheaper_than = [&](int other) { return other < 0 || o.gpu_hours < tuned[static_cast<std::size_t>(other)].gpu_hours; };
    if (o.slo_attainment >= policy.slo_attainment && cheaper_than(v.rival)) v.rival = static_cast<int>(i);
    if (o.slo_attainment >= slo_target && cheaper_than(v.cheapest_meeting)) v.cheapest_meeting = static_cast<int>(i);
  }
  const auto saving = [&](double other) { return 1.0 - policy.gpu_hours / other; };
  if (v.rival >= 0) v.saving_vs_rival = saving(tuned[static_cast<std::size_t>(v.rival)].gpu_hours);
  if (v.cheapest_meeting >= 0) {
    v.cost_ratio = policy.gpu_hours / tuned[static_cast<std::size_t>(v.cheapest_meeting)].gpu_hours;
  }
  v.front_gpu_hours = front_gpu_hours(fronts.statics, policy.slo_attainment);
  if (v.front_gpu_hours) v.saving_vs_front = saving(*v.front_gpu_hours);
  v.tracking_front_gpu_hours = tracking_front_at(fronts, policy.slo_attainment);
  if (v.tracking_front_gpu_hours) v.saving_vs_tracking_front = saving(*v.tracking_front_gpu_hours);
  v.bound_gpu_hours = hindsight_bound_at(fronts, policy.slo_attainment);
  v.bound_smoothed_gpu_hours = front_gpu_hours(fronts.bound_smoothed, policy.slo_attainment);
  // A share of a gap narrower than 1% of the front is noise (one GPU-hour of the policy's
  // would swing it by more than 100%): no share then, as when the bound costs more.
  const auto closed = [&](const std::optional<double>& bound) -> std::optional<double> {
    if (!bound || !v.tracking_front_gpu_hours) return std::nullopt;
    if (!(*v.tracking_front_gpu_hours - *bound >= kLeastGap * *v.tracking_front_gpu_hours)) return std::nullopt;
    return (*v.tracking_front_gpu_hours - policy.gpu_hours) / (*v.tracking_front_gpu_hours - *bound);
  };
  v.gap_closed = closed(v.bound_gpu_hours);
  v.gap_closed_smoothed = closed(v.bound_smoothed_gpu_hours);
  return v;
}

}  // namespace meshsim::rl
