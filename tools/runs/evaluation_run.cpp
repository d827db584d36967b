#include "tools/runs/evaluation_run.hpp"

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
#include "tools/runs/command_inputs.hpp"
#include "tools/runs/evaluation_plan.hpp"
#include "tools/runs/evaluation_report.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/runs/plot_script.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using rl::Contender;
using rl::EvalWindow;
using rl::Outcome;

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
