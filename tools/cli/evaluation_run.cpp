#include "tools/cli/evaluation_run.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <memory>
#include <ostream>

#include "configs/capacity_model_file.hpp"
#include "configs/config_file.hpp"
#include "configs/scenario_config.hpp"
#include "rl/env/bound_plays.hpp"
#include "rl/env/scaling_env.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/engine/thread_pool.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/evaluation_report.hpp"
#include "tools/cli/folder_lock.hpp"
#include "tools/cli/plot_script.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using rl::Contender;
using rl::EvalWindow;
using rl::Outcome;

// The recipe's config: --config, else the first policy's run's config.json, else the
// shipped recipe.
std::string recipe_path(const EvalCommandOptions& options) {
  if (!options.config_path.empty()) return options.config_path;
  if (!options.policies.empty()) {
    const fs::path run_config = fs::path(options.policies.front()).parent_path() / "config.json";
    if (configs::path_kind(run_config) != configs::PathKind::kMissing) return run_config.string();
  }
  return configs::default_training_path();
}

// The flags' values each within its range.
Status check_flags(const EvalCommandOptions& options) {
  if (options.split && *options.split != "test" && *options.split != "validation") {
    return Error{"--split: expected test or validation, got '" + *options.split + "'"};
  }
  if (options.window_start_s && (!(*options.window_start_s >= 0) || *options.window_start_s > 1e12)) {
    return Error{"--window-start: expected seconds in [0, 1e12], got " + number_text(*options.window_start_s)};
  }
  if (!(options.rate_scale > 0) || options.rate_scale > 1e6) {
    return Error{"--rate-scale: expected a multiple in (0, 1e6], got " + number_text(options.rate_scale)};
  }
  for (const double d : options.delays_s) {
    if (!(d >= 0) || d > 1e6) return Error{"--delays: expected seconds in [0, 1e6], got " + number_text(d)};
  }
  // Static sizes are swept from 1: a sweep of none has no baseline to judge by.
  if (options.max_static < 1 || options.max_static > 10'000) {
    return Error{"--max-static: expected a number of instances in [1, 10000], got " + std::to_string(options.max_static)};
  }
  const rl::BaselineGrids& g = options.grids;
  const std::tuple<const char*, const std::vector<double>*, double> grids[] = {
      {"--kv-targets", &g.kv_targets, 1.0},
      {"--request-targets", &g.request_targets, 1e9},
      {"--rate-targets", &g.rate_targets, 1e9},
      {"--token-targets", &g.token_targets, 1e9},
      {"--elastic-capacities", &g.elastic_capacities, 1e9},
      {"--oracle-utilisations", &g.oracle_utilisations, 1.0},
      {"--bound-utilisations", &g.bound_utilisations, 4.0},
      {"--multi-metric-scales", &g.multi_metric_scales, 100.0}};
  for (const auto& [flag, values, most] : grids) {
    if (values->empty()) return Error{std::string(flag) + ": expected at least one number"};
    for (const double v : *values) {
      if (!(v > 0) || v > most) {
        return Error{std::string(flag) + ": expected numbers in (0, " + number_text(most) + "], got " + number_text(v)};
      }
    }
  }
  for (const double v : g.capacity_targets) {
    if (!(v > 0) || v > 100) return Error{"--capacity-targets: expected numbers in (0, 100], got " + number_text(v)};
  }
  if (g.capacity_model && g.capacity_targets.empty()) return Error{"--capacity-targets: expected at least one number"};
  if (g.bound_prices < 1 || g.bound_prices > 1000) {
    return Error{"--bound-prices: expected a count in [1, 1000], got " + std::to_string(g.bound_prices)};
  }
  if (options.trace && options.workload_config) {
    return Error{"--trace and --workload both name the evaluated workload: give one"};
  }
  return Ok{};
}

// Whether two rl specs play and score a policy alike: all but the training's settings
// (rl.ppo, rl.train_also).
bool plays_alike(configs::RlSpec a, configs::RlSpec b) {
  a.ppo = b.ppo = {};
  a.train_also.clear();
  b.train_also.clear();
  return configs::rl_to_json(a) == configs::rl_to_json(b);
}

// The policies' actions and observations mean what they meant in training, and every
// play is scored by the reward they were trained for: they must share one rl spec
// (hyperparameters aside), which replaces the recipe's. A policy trained on several
// recipes (rl.train_also) plays a recipe that is one of them by that one's spec.
Status adopt_trained_spec(configs::ScenarioConfig& base, const std::vector<EvalPolicy>& policies) {
  const configs::RlSpec recipe_rl = *base.rl;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    if (!policies[p].trained_spec) continue;
    const configs::RlSpec* spec = &*policies[p].trained_spec;
    for (const configs::RlSpec& other : policies[p].train_also_specs) {
      if (plays_alike(other, recipe_rl)) spec = &other;
    }
    if (p == 0) {
      base.rl = *spec;
    } else if (!plays_alike(*spec, *base.rl)) {
      return Error{policies[p].source + ": trained with another rl spec than " + policies.front().source +
                   " (actions, observations, reward or windows differ); evaluate them apart"};
    }
  }
  return Ok{};
}

// What the plays need, resolved from the options and the policies.
struct EvalPlan {
  std::string config_path;
  configs::ScenarioConfig base;
  configs::Catalog catalog;
  traces::SharedWorkload recipe_workload;  // the baselines are tuned on its training windows
  traces::SharedWorkload workload;         // the evaluated one: the recipe's, or another
  std::string workload_name;
  bool other_workload = false;
  std::vector<EvalWindow> windows;  // evaluated
  std::vector<EvalWindow> tuning;   // the recipe's training windows
  rl::BaselineGrids grids;          // the flags', with the capacity model read
};

// The evaluated windows: the one the flags give, else the recipe's test or validation
// spans, each held out from training unless the flags allow the overlap.
Expected<std::vector<EvalWindow>> evaluated_windows(const EvalCommandOptions& options, const EvalPlan& plan) {
  const configs::RlSpec& rl_spec = *plan.base.rl;
  const traces::EpisodeWorkload& workload = *plan.workload;
  std::vector<EvalWindow> windows;
  if (plan.other_workload || options.window_start_s || options.window_s) {
    if (options.split) {
      return Error{"--split " + *options.split + ": the recipe's spans are not evaluated when " +
                   (plan.other_workload ? "another workload is" : "--window-start or --window is") +
                   " given: give one or the other"};
    }
    const double start = options.window_start_s.value_or(0.0);
    if (!options.window_s && !(start < workload.span_s())) {
      return Error{"--window-start " + number_text(start) + ": past the workload, which spans " +
                   number_text(workload.span_s()) + " s"};
    }
    const double length = options.window_s.value_or((workload.span_s() - start) / options.rate_scale);
    windows.push_back(EvalWindow{"window", start, length, options.rate_scale});
  } else {
    const std::string split = options.split_name();
    const auto& spans = split == "test" ? rl_spec.test : rl_spec.validation;
    if (spans.empty()) {
      return Error{plan.config_path + ": rl." + split + " names no spans to evaluate on: add them to the recipe, "
                   "or give --window-start/--window (with --allow-training-overlap when the window overlaps training)"};
    }
    for (EvalWindow w : rl::span_windows(spans, split)) {
      w.length_s /= options.rate_scale;  // the whole span, at the asked rate
      w.rate_scale = options.rate_scale;
      windows.push_back(w);
    }
  }
  for (const EvalWindow& w : windows) {
    if (!(w.length_s >= rl_spec.decision_interval.seconds()) || w.length_s > 1e12) {
      return Error{w.label + ": the evaluated window [" + number_text(w.start_s) + ", +" + number_text(w.length_s) +
                   ") s must hold at least one decision interval (" + number_text(rl_spec.decision_interval.seconds()) +
                   " s); the workload spans " + number_text(workload.span_s()) + " s"};
    }
    // Past the workload's end there is no load to judge by, only decisions (a window of
    // 1e12 s ran on for ever, holding each decision's figures): a window starts within the
    // workload and ends before twice its span (the span is its last arrival, so a window
    // to the workload's nominal end passes it a little).
    const double span = workload.span_s(), source_end = w.start_s + w.length_s * w.rate_scale;
    if (w.start_s >= span || source_end > 2 * span) {
      return Error{w.label + ": the evaluated window [" + number_text(w.start_s) + ", +" + number_text(w.length_s) +
                   ") s at " + number_text(w.rate_scale) + "x its rate reaches " + number_text(source_end) +
                   " s of a workload that spans " + number_text(span) + " s (it must start within it and end "
                   "before twice its span)"};
    }
    if (plan.other_workload || options.allow_training_overlap) continue;
    if (const std::string overlap = rl::check_held_out(rl_spec, w); !overlap.empty()) {
      return Error{w.label + ": " + overlap + ": a policy is judged on held-out load (the recipe's rl.test spans by "
                                              "default); --allow-training-overlap judges it anyway"};
    }
  }
  return windows;
}

Expected<EvalPlan> plan_evaluation(const EvalCommandOptions& options, const std::vector<EvalPolicy>& policies) {
  EvalPlan plan;
  plan.config_path = recipe_path(options);
  auto loaded =
      load_scenario_for_command(plan.config_path, {.trace_format = options.trace_format, .seed = options.seed,
                                                    .sets = options.sets, .catalog = options.catalog});
  if (!loaded) return loaded.error();
  plan.base = std::move(*loaded);
  if (!plan.base.rl) plan.base.rl = configs::RlSpec{};
  if (const Status flags = check_flags(options); !flags) return flags.error();
  plan.grids = options.grids;
  if (options.capacity_model) {
    auto model = configs::read_capacity_model(*options.capacity_model);
    if (!model) return Error{"--capacity-model: " + model.error().message};
    plan.grids.capacity_model = std::make_shared<const autoscale::CapacityModel>(std::move(*model));
    plan.grids.capacity_model_path = *options.capacity_model;
  }
  if (const Status adopted = adopt_trained_spec(plan.base, policies); !adopted) return adopted.error();
  auto catalog = configs::load_scenario_catalog(plan.base);
  if (!catalog) return catalog.error();
  plan.catalog = std::move(*catalog);
  const auto open = [&](const traces::WorkloadSpec& spec, const std::string& name) -> Expected<traces::SharedWorkload> {
    auto opened = traces::open_episode_workload(spec, plan.base.seed);
    if (!opened) return opened.error();
    if (!((*opened)->requests() > 0)) return Error{name + ": the workload has no requests"};
    return *opened;
  };
  auto recipe_workload = open(plan.base.workload, plan.config_path);
  if (!recipe_workload) return recipe_workload.error();
  plan.recipe_workload = plan.workload = *recipe_workload;
  plan.workload_name = plan.config_path;
  plan.other_workload = options.trace || options.workload_config;
  if (plan.other_workload) {
    traces::WorkloadSpec spec = plan.base.workload;
    if (options.trace) {
      auto file = trace_file_spec(*options.trace, options.trace_format);
      if (!file) return file.error();
      spec.source = *file;
      plan.workload_name = *options.trace;
    } else {
      auto other = configs::load_scenario(*options.workload_config);
      if (!other) return other.error();
      spec = other->workload;
      plan.workload_name = *options.workload_config + "'s workload";
    }
    auto evaluated = open(spec, plan.workload_name);
    if (!evaluated) return evaluated.error();
    plan.workload = *evaluated;
  }
  auto windows = evaluated_windows(options, plan);
  if (!windows) return windows.error();
  plan.windows = std::move(*windows);
  plan.tuning = rl::tuning_windows(*plan.base.rl, plan.recipe_workload->span_s());
  return plan;
}

// The policies must fit the scenario's pools; then an actor per policy and evaluated
// window, for windows played in parallel.
Expected<std::vector<std::vector<rl::Actor>>> make_actors(const EvalPlan& plan, const std::vector<EvalPolicy>& policies) {
  std::vector<std::vector<rl::Actor>> actors(policies.size());
  if (policies.empty()) return actors;
  configs::ScenarioConfig probe = plan.base;  // any window: only the sizes matter here
  probe.rl->windows_from_s = 0;
  probe.rl->windows_to_s = 0;
  auto env = rl::ScalingEnv::create(probe, plan.catalog, plan.workload);
  if (!env) return env.error();
  for (const EvalPolicy& p : policies) {
    const std::size_t features = p.observation_size.value_or((*env)->observation_size());
    const std::size_t entries = p.action_size.value_or((*env)->action_size());
    if (features != (*env)->observation_size() || entries != (*env)->action_size()) {
      return Error{p.source + ": the policy was trained for " + std::to_string(features) + " features and " +
                   std::to_string(entries) + " action entries; this scenario has " +
                   std::to_string((*env)->observation_size()) + " and " + std::to_string((*env)->action_size())};
    }
  }
  for (std::size_t p = 0; p < policies.size(); ++p) {
    for (std::size_t w = 0; w < plan.windows.size(); ++w) {
      auto actor = policies[p].make_actor();
      if (!actor) return Error{policies[p].source + ": " + actor.error().message};
      actors[p].push_back(std::move(*actor));
    }
  }
  return actors;
}

// Plays every (contender, window) pair on the pool; results in contender-major order.
std::vector<Outcome> play_all(engine::ThreadPool& pool, const std::vector<Contender>& contenders, std::uint32_t start,
                              const std::vector<EvalWindow>& windows, const configs::Catalog& catalog,
                              const traces::SharedWorkload& workload, double delay_s, std::uint64_t seed) {
  std::vector<Outcome> outcomes(contenders.size() * windows.size());
  pool.for_each(outcomes.size(), [&](std::size_t i) {
    const std::size_t c = i / windows.size(), w = i % windows.size();
    outcomes[i] = rl::play(contenders[c], catalog, workload, windows[w], delay_s, start, seed);
  });
  return outcomes;
}

// The plays of contender `c` over all windows, pooled.
Outcome pooled_plays(const std::vector<Outcome>& outcomes, std::size_t c, std::size_t windows) {
  return rl::pooled(std::vector<Outcome>(outcomes.begin() + static_cast<std::ptrdiff_t>(c * windows),
                                         outcomes.begin() + static_cast<std::ptrdiff_t>((c + 1) * windows)));
}

// The first play that failed, as an error naming it.
Status first_error(const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes) {
    if (!o.error.empty()) return Error{display_name(o) + ": " + o.error};
  }
  return Ok{};
}



// Every adaptive baseline at every parameter of its family's grid, at one delay; the
// oracle is tuned the same way (its last family) but judged apart, as a bound.
struct AdaptiveBaselines {
  std::vector<Contender> contenders;
  std::vector<std::size_t> chosen;  // each family's pick, an index into `contenders`; the oracle's last
  bool tracking(std::size_t c) const { return contenders[c].policy.starts_with("target_tracking"); }
  // Judged like a policy, not a baseline: capacity-units target tracking.
  bool challenger(std::size_t c) const { return contenders[c].policy.starts_with(rl::kCapacityTrackingPolicy); }
};

// Plays every parameter of `families` on the training windows, adds them to `baselines`
// and each family's pick to baselines.chosen; returns the picks' parameters by family
// (unset where a family picked none).
Expected<std::vector<std::optional<double>>> tune_families(const std::vector<rl::BaselineFamily>& families,
                                                          const EvalPlan& plan, const configs::ScenarioConfig& at_delay,
                                                          double delay, std::uint32_t start, engine::ThreadPool& pool,
                                                          EvalOutputs& outputs, AdaptiveBaselines& baselines) {
  std::vector<Contender> contenders;
  std::vector<std::size_t> family_of;
  for (std::size_t f = 0; f < families.size(); ++f) {
    for (const double parameter : families[f].parameters) {
      Contender c{families[f].policy, parameter, at_delay, true, nullptr};
      families[f].apply(c.config, parameter);
      contenders.push_back(std::move(c));
      family_of.push_back(f);
    }
  }
  const std::vector<Outcome> tuning =
      play_all(pool, contenders, start, plan.tuning, plan.catalog, plan.recipe_workload, delay, plan.base.seed);
  if (const Status ok = first_error(tuning); !ok) return ok.error();
  const std::size_t offset = baselines.contenders.size();
  std::vector<std::optional<double>> picks(families.size());
  for (std::size_t f = 0; f < families.size(); ++f) {
    std::vector<Outcome> family;
    std::vector<std::size_t> index;
    for (std::size_t c = 0; c < contenders.size(); ++c) {
      if (family_of[c] != f) continue;
      family.push_back(pooled_plays(tuning, c, plan.tuning.size()));
      index.push_back(c);
    }
    const int chosen = rl::pick(family, plan.base.rl->slo_target);
    for (std::size_t i = 0; i < family.size(); ++i) outputs.tuning_row(delay, family[i], static_cast<int>(i) == chosen);
    if (chosen < 0) continue;
    const std::size_t c = index[static_cast<std::size_t>(chosen)];
    baselines.chosen.push_back(offset + c);
    picks[f] = contenders[c].parameter;
  }
  baselines.contenders.insert(baselines.contenders.end(), contenders.begin(), contenders.end());
  return picks;
}

// Tunes the adaptive baselines on the training windows from the tuned static size: each
// family keeps the parameter the protocol picks (tuning.csv records every play). Then
// multi-metric target tracking over the one-metric families' tuned targets (it needs
// them), then the oracle.
Expected<AdaptiveBaselines> tune_adaptive(const EvalPlan& plan, const rl::BaselineGrids& grids,
                                          const configs::ScenarioConfig& at_delay, double delay, std::uint32_t start,
                                          engine::ThreadPool& pool, EvalOutputs& outputs) {
  AdaptiveBaselines baselines;
  const auto families = rl::adaptive_baselines(grids);
  const auto picks = tune_families(families, plan, at_delay, delay, start, pool, outputs, baselines);
  if (!picks) return picks.error();
  std::vector<autoscale::TrackedTarget> tuned_targets;
  for (std::size_t f = 0; f < families.size(); ++f) {
    if (families[f].tracked && (*picks)[f]) tuned_targets.push_back({*families[f].tracked, *(*picks)[f]});
  }
  std::vector<rl::BaselineFamily> last;
  if (tuned_targets.size() >= 2 && !grids.multi_metric_scales.empty()) {
    last.push_back(rl::multi_metric_baseline(tuned_targets, grids.multi_metric_scales));
  }
  last.push_back(rl::oracle_bound(grids));
  if (const auto tuned = tune_families(last, plan, at_delay, delay, start, pool, outputs, baselines); !tuned) {
    return tuned.error();
  }
  return baselines;
}

// The right-sizing bound's plays on each window (its fronts' bound lists): at every
// utilisation in the hindsight and smoothed forms, and at the window's prices of a miss
// in the priced form. A scenario with several pools has none (it schedules one pool):
// noted on `err`, not fatal, and the result is empty.
std::vector<rl::Fronts> play_bounds(const EvalPlan& plan, const configs::ScenarioConfig& at_delay,
                                    const std::vector<rl::MeasuredCapacity>& capacities,
                                    const std::vector<std::vector<double>>& rates, const rl::BaselineGrids& grids,
                                    double delay, std::uint32_t start, engine::ThreadPool& pool, std::ostream& err) {
  struct Play {
    std::size_t window;
    rl::BoundForm form;
    double parameter;
  };
  std::vector<Play> asked;
  for (std::size_t w = 0; w < plan.windows.size(); ++w) {
    for (const rl::BoundForm form : {rl::BoundForm::kHindsight, rl::BoundForm::kSmoothed}) {
      for (const double u : grids.bound_utilisations) asked.push_back({w, form, u});
    }
    for (const double price : rl::miss_prices(at_delay, capacities[w], rates[w].size(), grids.bound_prices)) {
      asked.push_back({w, rl::BoundForm::kPriced, price});
    }
  }
  std::vector<Outcome> plays(asked.size());
  pool.for_each(plays.size(), [&](std::size_t i) {
    const Play& p = asked[i];
    const auto sizes = rl::bound_schedule(at_delay, rates[p.window], capacities[p.window], p.parameter, p.form, delay, start);
    plays[i] = rl::play_schedule(rl::bound_name(p.form), p.parameter, at_delay, plan.catalog, plan.workload,
                                 plan.windows[p.window], delay, start, plan.base.seed, sizes);
  });
  std::vector<rl::Fronts> fronts(plan.windows.size());
  for (std::size_t i = 0; i < plays.size(); ++i) {
    if (!plays[i].error.empty()) {
      err << "note: no right-sizing bound: " << plays[i].error << '\n';
      return {};
    }
    rl::Fronts& f = fronts[asked[i].window];
    switch (asked[i].form) {
      case rl::BoundForm::kHindsight: f.bound_hindsight.push_back(std::move(plays[i])); break;
      case rl::BoundForm::kSmoothed: f.bound_smoothed.push_back(std::move(plays[i])); break;
      case rl::BoundForm::kPriced: f.bound_priced.push_back(std::move(plays[i])); break;
    }
  }
  return fronts;
}

// The evaluated policies' plays, each window with its own actor; policy-major.
Expected<std::vector<Outcome>> play_policies(const EvalPlan& plan, const std::vector<EvalPolicy>& policies,
                                             std::vector<std::vector<rl::Actor>>& actors,
                                             const configs::ScenarioConfig& at_delay, double delay, std::uint32_t start,
                                             engine::ThreadPool& pool) {
  const std::size_t windows = plan.windows.size();
  std::vector<Outcome> trained(policies.size() * windows);
  pool.for_each(trained.size(), [&](std::size_t i) {
    const std::size_t p = i / windows, w = i % windows;
    const Contender c{policies[p].name, rl::kNoParameter, at_delay, false, &actors[p][w]};
    trained[i] = rl::play(c, plan.catalog, plan.workload, plan.windows[w], delay, start, plan.base.seed);
  });
  for (std::size_t i = 0; i < trained.size(); ++i) {
    if (!trained[i].error.empty()) return Error{policies[i / windows].source + ": " + trained[i].error};
  }
  return trained;
}

// Window `w`'s share of one delay's plays (each list contender-major over `windows`):
// the policies, the tuned baselines (static first, the oracle apart), every target
// tracking parameter, the hindsight statics and the bound's fronts.
WindowPlays window_plays(const std::vector<EvalWindow>& all, std::size_t w, double delay, std::uint32_t start,
                         const AdaptiveBaselines& adaptive, const std::vector<std::size_t>& slot,
                         const std::vector<Outcome>& played, const std::vector<Outcome>& trained,
                         const rl::StaticPlays& hindsight_statics, const std::vector<rl::Fronts>& bounds) {
  const std::size_t windows = all.size();
  const auto at = [&](const std::vector<Outcome>& plays_of, std::size_t c) -> const Outcome& {
    return plays_of[c * windows + w];
  };
  WindowPlays plays;
  plays.window = &all[w];
  plays.delay_s = delay;
  plays.start = start;
  for (std::size_t p = 0; p < trained.size() / windows; ++p) plays.policies.push_back(&at(trained, p));
  plays.tuned.push_back(at(played, 0));
  for (std::size_t k = 0; k + 1 < adaptive.chosen.size(); ++k) {
    const std::size_t c = adaptive.chosen[k];
    if (adaptive.challenger(c)) {
      plays.policies.push_back(&at(played, slot[c]));
    } else {
      plays.tuned.push_back(at(played, slot[c]));
    }
  }
  for (const auto& sizes : hindsight_statics) plays.fronts.statics.push_back(sizes[w]);
  plays.oracle = &at(played, slot[adaptive.chosen.back()]);
  for (std::size_t c = 0; c < adaptive.contenders.size(); ++c) {
    if (adaptive.tracking(c)) plays.fronts.tracking.push_back(at(played, slot[c]));
  }
  plays.bounded = !bounds.empty();
  if (plays.bounded) {
    plays.fronts.bound_hindsight = bounds[w].bound_hindsight;
    plays.fronts.bound_smoothed = bounds[w].bound_smoothed;
    plays.fronts.bound_priced = bounds[w].bound_priced;
  }
  return plays;
}

}  // namespace

int run_evaluation(const EvalCommandOptions& options, std::vector<EvalPolicy> policies, std::ostream& out,
                   std::ostream& err) {
  auto planned = plan_evaluation(options, policies);
  if (!planned) return fail(err, planned.error().message, kExitBadInput);
  const EvalPlan& plan = *planned;
  const configs::ScenarioConfig& base = plan.base;
  const configs::RlSpec& rl_spec = *base.rl;
  const std::vector<EvalWindow>& windows = plan.windows;
  auto lock = FolderLock::acquire(options.out_dir, "meshsim eval");  // held to the end
  if (!lock) return fail(err, lock.error().message, kExitOutputError);
  auto actors = make_actors(plan, policies);
  if (!actors) return fail(err, actors.error().message, kExitBadInput);
  const std::uint32_t max_static = std::min(options.max_static, base.scaling.manager.max_total_instances);
  const std::vector<double> delays = options.delays_s.empty() ? rl::trained_delays(base) : options.delays_s;
  EvalOutputs outputs(options.out_dir);
  engine::ThreadPool pool(0);
  const std::uint64_t seed = base.seed;

  out << "recipe " << plan.config_path << ": baselines tuned on " << plan.tuning.size() << " training windows of "
      << number_text(rl_spec.episode_length.seconds()) << " s (the cheapest reaching " << percent_text(rl_spec.slo_target)
      << " SLO attainment); evaluating on " << windows.size() << " window" << (windows.size() == 1 ? "" : "s") << " of "
      << plan.workload_name << (plan.other_workload ? "" : " (" + options.split_name() + " spans)") << '\n';

  // Static sizes never scale: one sweep serves every delay. On the training windows it
  // stops at the first size reaching the target (the tuned one, unless none does); on the
  // evaluated windows, once the front has saturated (the hindsight bound).
  const auto tuned_static = rl::tune_static_size(base, plan.catalog, plan.recipe_workload, max_static, pool);
  if (!tuned_static) return fail(err, tuned_static.error().message, kExitBadInput);
  const std::uint32_t start = tuned_static->size;
  const auto hindsight_statics = rl::sweep_statics(
      base, plan.catalog, plan.workload, windows, max_static,
      [&](const rl::StaticPlays& so_far) { return rl::front_saturated(so_far, rl_spec.slo_target); }, pool);
  for (const auto& plays : hindsight_statics) {
    if (const Status ok = first_error(plays); !ok) return fail(err, ok.error().message, kExitBadInput);
  }

  // The right-sizing bound's inputs on each evaluated window: what pools of 1 to 8
  // instances sustain at the SLO target on each 10-minute stretch's own requests, and its
  // arrivals per decision interval (rl/env/bound_plays.hpp).
  std::vector<rl::MeasuredCapacity> capacities(windows.size());
  std::vector<std::vector<double>> rates(windows.size());
  for (std::size_t w = 0; w < windows.size(); ++w) {
    capacities[w] = rl::measure_capacity(base, plan.catalog, plan.workload, windows[w], pool);
    if (!capacities[w].error.empty()) {
      return fail(err, windows[w].label + ": capacity at the SLO: " + capacities[w].error, kExitBadInput);
    }
    rates[w] = rl::interval_rates(rl_spec, *plan.workload, windows[w]);
    const rl::MeasuredCapacity& c = capacities[w];
    out << "  " << windows[w].label << ": at the " << percent_text(rl_spec.slo_target)
        << " SLO target, 1 / 2 / 4 / 8 instances sustain " << fixed_text(c.mean_sustained(1), 2) << " / "
        << fixed_text(c.mean_sustained(2), 2) << " / " << fixed_text(c.mean_sustained(4), 2) << " / "
        << fixed_text(c.mean_sustained(8), 2) << " requests/s (the mean over " << c.curves.size() << " stretches of "
        << number_text(c.grid_s) << " s, " << c.replays << " replays; drain " << fixed_text(c.drain_s, 1) << " s)";
    if (c.below_target > 0) out << "; " << c.below_target << " stretch-sizes meet it at no load (their best instead)";
    out << '\n';
  }

  for (const double delay : delays) {
    configs::ScenarioConfig at_delay = base;
    at_delay.scaling.manager.scale_up_delay = engine::SimTime::from_seconds(delay);
    for (const Outcome& o : tuned_static->sizes) outputs.tuning_row(delay, o, o.parameter == start);
    auto adaptive = tune_adaptive(plan, plan.grids, at_delay, delay, start, pool, outputs);
    if (!adaptive) return fail(err, adaptive.error().message, kExitBadInput);
    // On the evaluated windows, each once: the tuned static size, every target tracking
    // parameter (each metric's front, its tuned one among them: "equal SLO" is read off
    // the front), and the other families' picks. Every family picks one parameter (its
    // grid is not empty), so the oracle is the last pick.
    std::vector<Contender> contenders{Contender{"static", double(start), base, false, nullptr}};
    std::vector<std::size_t> slot(adaptive->contenders.size(), 0);  // where contender c plays (0: not)
    for (std::size_t c = 0; c < adaptive->contenders.size(); ++c) {
      const auto& chosen = adaptive->chosen;
      if (!adaptive->tracking(c) && std::find(chosen.begin(), chosen.end(), c) == chosen.end()) continue;
      slot[c] = contenders.size();
      contenders.push_back(adaptive->contenders[c]);
    }
    const std::vector<Outcome> played =
        play_all(pool, contenders, start, windows, plan.catalog, plan.workload, delay, seed);
    if (const Status ok = first_error(played); !ok) return fail(err, ok.error().message, kExitBadInput);
    auto trained = play_policies(plan, policies, *actors, at_delay, delay, start, pool);
    if (!trained) return fail(err, trained.error().message, kExitBadInput);
    const std::vector<rl::Fronts> bounds =
        play_bounds(plan, at_delay, capacities, rates, plan.grids, delay, start, pool, err);

    for (std::size_t w = 0; w < windows.size(); ++w) {
      const WindowPlays plays = window_plays(windows, w, delay, start, *adaptive, slot, played, *trained,
                                             hindsight_statics, bounds);
      outputs.report(plays, rl_spec.slo_target, rl_spec.decision_interval.seconds(), out);
    }
  }
  if (const Status written = outputs.commit(); !written) return fail(err, written.error().message, kExitOutputError);
  out << "\noutputs       " << outputs.paths();
  const std::string png = (fs::path(options.out_dir) / "eval.png").string();
  const auto drawn = options.plot ? draw_plot("plot_eval.py", {options.out_dir}, png, err) : Expected<bool>(false);
  out << (drawn && *drawn ? ", " + png : "") << '\n';
  return drawn ? kExitOk : fail(err, drawn.error().message, kExitOutputError);
}

}  // namespace meshsim::cli
