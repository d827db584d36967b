#include "tools/runs/evaluation_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "configs/capacity_model_file.hpp"
#include "configs/config_file.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/runs/command_inputs.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using rl::EvalWindow;

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

}  // namespace

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

}  // namespace meshsim::cli
