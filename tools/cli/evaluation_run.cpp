#include "tools/cli/evaluation_run.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <ostream>

#include "configs/scenario_config.hpp"
#include "rl/env/bound_plays.hpp"
#include "rl/env/scaling_env.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/engine/thread_pool.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/commands.hpp"
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
    if (fs::exists(run_config)) return run_config.string();
  }
  return configs::default_training_path();
}

std::string parameter_text(const Outcome& o) {
  if (std::isnan(o.parameter)) return "";
  if (o.policy == "target_tracking_kv") return number_text(100.0 * o.parameter) + "%";
  return number_text(o.parameter);
}

std::string display_name(const Outcome& o) {
  return o.policy + (std::isnan(o.parameter) ? "" : " " + parameter_text(o));
}

// `value` with `decimals` decimals, for the console.
std::string fixed_text(double value, int decimals = 2) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// A GPU-hour saving (1 - policy / other) as the console says it: "12.3% fewer", "4.0% more".
std::string saving_text(double saving) {
  return fixed_text(std::abs(saving) * 100, 1) + (saving >= 0 ? "% fewer" : "% more");
}

std::string optional_text(const std::optional<double>& value) {
  return value ? number_text(*value) : std::string();
}

// Plays every (contender, window) pair on the pool; results in contender-major order.
std::vector<Outcome> play_all(engine::ThreadPool& pool, const std::vector<Contender>& contenders,
                              const std::vector<std::uint32_t>& starts, const std::vector<EvalWindow>& windows,
                              const configs::Catalog& catalog, const traces::SharedWorkload& workload, double delay_s,
                              std::uint64_t seed) {
  std::vector<Outcome> outcomes(contenders.size() * windows.size());
  pool.for_each(outcomes.size(), [&](std::size_t i) {
    const std::size_t c = i / windows.size(), w = i % windows.size();
    outcomes[i] = rl::play(contenders[c], catalog, workload, windows[w], delay_s, starts[c], seed);
  });
  return outcomes;
}

// The plays of contender `c` over all windows, pooled.
Outcome pooled_plays(const std::vector<Outcome>& outcomes, std::size_t c, std::size_t windows) {
  return rl::pooled(std::vector<Outcome>(outcomes.begin() + static_cast<std::ptrdiff_t>(c * windows),
                                         outcomes.begin() + static_cast<std::ptrdiff_t>((c + 1) * windows)));
}

const Outcome* first_error(const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes) {
    if (!o.error.empty()) return &o;
  }
  return nullptr;
}

std::string eval_row(const EvalWindow& w, double delay, const Outcome& o, const char* role, double slo_target) {
  char line[640];
  std::snprintf(line, sizeof line,
                "%s,%s,%s,%s,%s,%s,%s,%s,%u,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%" PRIu64 ",%" PRIu64 ",%.3f,%.6f,%s\n",
                w.label.c_str(), number_text(w.start_s).c_str(), number_text(w.length_s).c_str(),
                number_text(w.rate_scale).c_str(), number_text(delay).c_str(), o.policy.c_str(),
                std::isnan(o.parameter) ? "" : number_text(o.parameter).c_str(), role, o.start_instances,
                o.slo_attainment, o.ttft_p50, o.ttft_p99, o.tbt_p50, o.tbt_p99, o.gpu_hours, o.mean_instances,
                o.scale_ups, o.scale_downs, o.actions_per_hour, o.reward, number_text(slo_target).c_str());
  return line;
}

// The table's first column is as wide as its longest policy name (at least 34), so long
// names (a checkpoint's path) never push a row's figures out of their columns.
int name_width(const std::vector<const Outcome*>& rows) {
  std::size_t width = 34;
  for (const Outcome* o : rows) width = std::max(width, display_name(*o).size());
  return static_cast<int>(width);
}

void print_table_row(std::ostream& out, const Outcome& o, const char* note, int width) {
  char figures[256];
  std::snprintf(figures, sizeof figures, " %8s %9.3fs %9.3fs %9.2f %8.2f %9.1f %11.3f  %s\n",
                percent_text(o.slo_attainment).c_str(), o.ttft_p99, o.tbt_p99, o.gpu_hours, o.mean_instances,
                o.actions_per_hour, o.reward, note);
  std::string name = display_name(o);
  name.resize(static_cast<std::size_t>(width), ' ');
  out << "  " << name << figures;
}

// The verdict on one play, in words: first whether it costs more than the cheapest tuned
// baseline meeting the SLO target (as a multiple, never hidden behind another
// comparison), then the fronts at its SLO attainment.
std::string verdict_text(const Outcome& o, const rl::Verdict& v, const Outcome* cheapest, bool bounded,
                         double slo_target) {
  std::string text = percent_text(o.slo_attainment) + " SLO for " + fixed_text(o.gpu_hours) + " GPU-h; ";
  const std::string target = "the " + percent_text(slo_target) + " target";
  if (cheapest == nullptr) {
    text += "no tuned baseline meets " + target;
  } else {
    const std::string named = " (" + display_name(*cheapest) + ": " + percent_text(cheapest->slo_attainment) + ", " +
                              fixed_text(cheapest->gpu_hours) + " GPU-h)";
    if (*v.cost_ratio > 1) {
      text += "costs " + fixed_text(*v.cost_ratio) + "x the cheapest tuned baseline meeting " + target + named;
    } else {
      text += saving_text(1 - *v.cost_ratio) + " GPU-hours than the cheapest tuned baseline meeting " + target + named;
    }
  }
  if (o.slo_attainment < slo_target) text += ", and misses " + target + " itself";
  const auto at_slo = [&](const char* what, const std::optional<double>& gpu_hours) {
    return std::string("; ") + what + (gpu_hours ? " at its SLO: " + fixed_text(*gpu_hours) + " GPU-h (" +
                                                       saving_text(1 - o.gpu_hours / *gpu_hours) + ")"
                                                 : " never reaches its SLO");
  };
  text += at_slo("target tracking's front", v.tracking_front_gpu_hours);
  text += at_slo("the hindsight static front", v.front_gpu_hours);
  if (bounded) {
    text += at_slo("the right-sizing bound", v.bound_gpu_hours);
    text += at_slo("the bound smoothed over a minute", v.bound_smoothed_gpu_hours);
  }
  if (v.gap_closed_smoothed) {
    text += "; closes " + fixed_text(*v.gap_closed_smoothed * 100, 1) +
            "% of the gap from target tracking's front to the smoothed bound";
  }
  return text;
}

// Whether two rl specs play and score a policy alike: all but the training's settings
// (rl.ppo, rl.train_also).
bool plays_alike(configs::RlSpec a, configs::RlSpec b) {
  a.ppo = b.ppo = {};
  a.train_also.clear();
  b.train_also.clear();
  return configs::rl_to_json(a) == configs::rl_to_json(b);
}

}  // namespace

int run_evaluation(const EvalCommandOptions& options, std::vector<EvalPolicy> policies, std::ostream& out,
                   std::ostream& err) {
  const std::string config_path = recipe_path(options);
  auto loaded = load_scenario_for_command(config_path, std::nullopt, options.trace_format, options.seed);
  if (!loaded) return fail(err, loaded.error().message, kExitBadInput);
  configs::ScenarioConfig base = *loaded;
  if (!base.rl) base.rl = configs::RlSpec{};
  if (options.split != "test" && options.split != "validation") {
    return fail(err, "--split: expected test or validation, got '" + options.split + "'", kExitBadInput);
  }
  if (options.window_start_s && (!(*options.window_start_s >= 0) || *options.window_start_s > 1e12)) {
    return fail(err, "--window-start: expected seconds in [0, 1e12], got " + number_text(*options.window_start_s),
                kExitBadInput);
  }
  if (!(options.rate_scale > 0) || options.rate_scale > 1e6) {
    return fail(err, "--rate-scale: expected a multiple in (0, 1e6], got " + number_text(options.rate_scale),
                kExitBadInput);
  }
  for (const double d : options.delays_s) {
    if (!(d >= 0) || d > 1e6) return fail(err, "--delays: expected seconds in [0, 1e6], got " + number_text(d), kExitBadInput);
  }
  const std::pair<const char*, const std::vector<double>*> grids[] = {
      {"--kv-targets", &options.grids.kv_targets},       {"--request-targets", &options.grids.request_targets},
      {"--rate-targets", &options.grids.rate_targets},   {"--token-targets", &options.grids.token_targets},
      {"--elastic-capacities", &options.grids.elastic_capacities},
      {"--oracle-utilisations", &options.grids.oracle_utilisations},
      {"--bound-utilisations", &options.grids.bound_utilisations}};
  for (const auto& [flag, values] : grids) {
    const bool fraction = values == &options.grids.kv_targets || values == &options.grids.oracle_utilisations ||
                          values == &options.grids.bound_utilisations;
    const double most = fraction ? 1.0 : 1e9;
    if (values->empty()) return fail(err, std::string(flag) + ": expected at least one number", kExitBadInput);
    for (const double v : *values) {
      if (!(v > 0) || v > most) {
        return fail(err, std::string(flag) + ": expected numbers in (0, " + number_text(most) + "], got " + number_text(v),
                    kExitBadInput);
      }
    }
  }
  if (options.trace && options.workload_config) {
    return fail(err, "--trace and --workload both name the evaluated workload: give one", kExitBadInput);
  }

  // The policies' actions and observations mean what they meant in training, and every
  // play is scored by the reward they were trained for: they must share one rl spec
  // (hyperparameters aside), which replaces the recipe's. A policy trained on several
  // recipes (rl.train_also) plays a recipe that is one of them by that one's spec.
  const configs::RlSpec recipe_rl = *base.rl;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    if (!policies[p].trained_spec) continue;
    const configs::RlSpec* spec = &*policies[p].trained_spec;
    for (const configs::RlSpec& other : policies[p].train_also_specs) {
      if (plays_alike(other, recipe_rl)) spec = &other;
    }
    if (p == 0) {
      base.rl = *spec;
    } else {
      if (!plays_alike(*spec, *base.rl)) {
        return fail(err, policies[p].source + ": trained with another rl spec than " + policies.front().source +
                             " (actions, observations, reward or windows differ); evaluate them apart", kExitBadInput);
      }
    }
  }
  const configs::RlSpec& rl_spec = *base.rl;

  if (options.catalog) base.catalog = *options.catalog;
  auto catalog = configs::load_scenario_catalog(base);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto recipe_workload = traces::open_episode_workload(base.workload, base.seed);
  if (!recipe_workload) return fail(err, recipe_workload.error().message, kExitBadInput);
  if (!((*recipe_workload)->requests() > 0)) return fail(err, config_path + ": the workload has no requests", kExitBadInput);

  // The evaluated workload: the recipe's, or another one.
  const bool other_workload = options.trace || options.workload_config;
  traces::SharedWorkload workload = *recipe_workload;
  std::string workload_name = config_path;
  if (other_workload) {
    traces::WorkloadSpec spec = base.workload;
    if (options.trace) {
      auto file = trace_file_spec(*options.trace, options.trace_format);
      if (!file) return fail(err, file.error().message, kExitBadInput);
      spec.source = *file;
      workload_name = *options.trace;
    } else {
      auto other = configs::load_scenario(*options.workload_config);
      if (!other) return fail(err, other.error().message, kExitBadInput);
      spec = other->workload;
      workload_name = *options.workload_config + "'s workload";
    }
    auto opened = traces::open_episode_workload(spec, base.seed);
    if (!opened) return fail(err, opened.error().message, kExitBadInput);
    if (!((*opened)->requests() > 0)) return fail(err, workload_name + ": the workload has no requests", kExitBadInput);
    workload = *opened;
  }

  // The evaluated windows.
  std::vector<EvalWindow> windows;
  if (other_workload || options.window_start_s || options.window_s) {
    const double start = options.window_start_s.value_or(0.0);
    const double length = options.window_s.value_or((workload->span_s() - start) / options.rate_scale);
    windows.push_back(EvalWindow{"window", start, length, options.rate_scale});
  } else {
    const auto& spans = options.split == "test" ? rl_spec.test : rl_spec.validation;
    if (spans.empty()) {
      return fail(err, config_path + ": rl." + options.split + " names no spans to evaluate on: add them to the recipe, "
                                     "or give --window-start/--window (with --allow-training-overlap when the window "
                                     "overlaps training)", kExitBadInput);
    }
    for (EvalWindow w : rl::span_windows(spans, options.split)) {
      w.length_s /= options.rate_scale;  // the whole span, at the asked rate
      w.rate_scale = options.rate_scale;
      windows.push_back(w);
    }
  }
  for (const EvalWindow& w : windows) {
    if (!(w.length_s >= rl_spec.decision_interval.seconds()) || w.length_s > 1e12) {
      return fail(err, w.label + ": the evaluated window [" + number_text(w.start_s) + ", +" + number_text(w.length_s) +
                           ") s must hold at least one decision interval (" +
                           number_text(rl_spec.decision_interval.seconds()) + " s); the workload spans " +
                           number_text(workload->span_s()) + " s",
                  kExitBadInput);
    }
    if (other_workload || options.allow_training_overlap) continue;
    if (const std::string overlap = rl::check_held_out(rl_spec, w); !overlap.empty()) {
      return fail(err, w.label + ": " + overlap + ": a policy is judged on held-out load (the recipe's rl.test spans by "
                                                  "default); --allow-training-overlap judges it anyway",
                  kExitBadInput);
    }
  }
  const std::vector<EvalWindow> tuning = rl::tuning_windows(rl_spec, (*recipe_workload)->span_s());

  auto lock = FolderLock::acquire(options.out_dir, "meshsim eval");  // held to the end
  if (!lock) return fail(err, lock.error().message, kExitOutputError);
  if (!policies.empty()) {  // the policies must fit the scenario's pools
    configs::ScenarioConfig probe = base;  // any window: only the sizes matter here
    probe.rl->windows_from_s = 0;
    probe.rl->windows_to_s = 0;
    auto env = rl::ScalingEnv::create(probe, *catalog, workload);
    if (!env) return fail(err, env.error().message, kExitBadInput);
    for (const EvalPolicy& p : policies) {
      const std::size_t features = p.observation_size.value_or((*env)->observation_size());
      const std::size_t entries = p.action_size.value_or((*env)->action_size());
      if (features != (*env)->observation_size() || entries != (*env)->action_size()) {
        return fail(err, p.source + ": the policy was trained for " + std::to_string(features) +
                             " features and " + std::to_string(entries) + " action entries; this scenario has " +
                             std::to_string((*env)->observation_size()) + " and " +
                             std::to_string((*env)->action_size()), kExitBadInput);
      }
    }
  }
  // An actor per policy and evaluated window, for windows played in parallel.
  std::vector<std::vector<rl::Actor>> actors(policies.size());
  for (std::size_t p = 0; p < policies.size(); ++p) {
    for (std::size_t w = 0; w < windows.size(); ++w) {
      auto actor = policies[p].make_actor();
      if (!actor) return fail(err, policies[p].source + ": " + actor.error().message, kExitBadInput);
      actors[p].push_back(std::move(*actor));
    }
  }

  const std::uint32_t max_static = std::min(options.max_static, base.scaling.manager.max_total_instances);
  const std::vector<double> delays = options.delays_s.empty() ? rl::trained_delays(base) : options.delays_s;

  AtomicFile tuning_csv((fs::path(options.out_dir) / "tuning.csv").string());
  tuning_csv.stream() << "delay_s,policy,parameter,start_instances,slo_attainment,gpu_hours,mean_instances,"
                         "actions_per_hour,reward,chosen\n";
  AtomicFile eval_csv((fs::path(options.out_dir) / "eval.csv").string());
  eval_csv.stream() << "window,window_start_s,window_s,rate_scale,delay_s,policy,parameter,role,start_instances,"
                       "slo_attainment,ttft_p50_s,ttft_p99_s,tbt_p50_s,tbt_p99_s,gpu_hours,mean_instances,scale_ups,"
                       "scale_downs,actions_per_hour,reward,slo_target\n";
  AtomicFile verdicts_csv((fs::path(options.out_dir) / "verdicts.csv").string());
  verdicts_csv.stream() << "window,delay_s,policy,slo_attainment,gpu_hours,actions_per_hour,rival,rival_slo,"
                           "rival_gpu_hours,saving_vs_rival,cheapest_meeting_target,cheapest_meeting_slo,"
                           "cheapest_meeting_gpu_hours,cost_ratio,front_gpu_hours,saving_vs_front,"
                           "tracking_front_gpu_hours,saving_vs_tracking_front,bound_gpu_hours,bound_smoothed_gpu_hours,"
                           "gap_closed,gap_closed_smoothed,oracle_slo,oracle_gpu_hours\n";
  AtomicFile series((fs::path(options.out_dir) / "instances.csv").string());
  series.stream() << "window,delay_s,policy,time_s,instances\n";
  engine::ThreadPool pool(0);
  const double interval_s = rl_spec.decision_interval.seconds();
  const std::uint64_t seed = base.seed;
  const auto failure = [&](const Outcome& o) {
    return fail(err, display_name(o) + ": " + o.error, kExitBadInput);
  };
  const auto tuning_row = [&](double delay, const Outcome& o, bool chosen) {
    char line[320];
    std::snprintf(line, sizeof line, "%s,%s,%s,%u,%.6f,%.6f,%.4f,%.3f,%.6f,%d\n", number_text(delay).c_str(),
                  o.policy.c_str(), std::isnan(o.parameter) ? "" : number_text(o.parameter).c_str(), o.start_instances,
                  o.slo_attainment, o.gpu_hours, o.mean_instances, o.actions_per_hour, o.reward, chosen ? 1 : 0);
    tuning_csv.stream() << line;
  };

  out << "recipe " << config_path << ": baselines tuned on " << tuning.size() << " training windows of "
      << number_text(rl_spec.episode_length.seconds()) << " s (the cheapest reaching " << percent_text(rl_spec.slo_target)
      << " SLO attainment); evaluating on " << windows.size() << " window" << (windows.size() == 1 ? "" : "s") << " of "
      << workload_name << (other_workload ? "" : " (" + options.split + " spans)") << '\n';

  // Static sizes never scale: one sweep serves every delay. On the training windows it
  // stops at the first size reaching the target (the tuned one, unless none does); on the
  // evaluated windows, once the front has saturated (the hindsight bound).
  const auto tuned_static = rl::tune_static_size(base, *catalog, *recipe_workload, max_static, pool);
  if (!tuned_static) return fail(err, tuned_static.error().message, kExitBadInput);
  const std::uint32_t start = tuned_static->size;
  const auto hindsight_statics = rl::sweep_statics(
      base, *catalog, workload, windows, max_static,
      [&](const rl::StaticPlays& so_far) { return rl::front_saturated(so_far, rl_spec.slo_target); }, pool);
  for (const auto& plays : hindsight_statics) {
    if (const Outcome* failed = first_error(plays)) return failure(*failed);
  }

  // The right-sizing bound's inputs on each evaluated window: one instance's capacity on
  // its length mix, and its arrivals per decision interval (rl/env/bound_plays.hpp).
  std::vector<rl::CapacityProbe> probes(windows.size());
  std::vector<std::vector<double>> rates(windows.size());
  pool.for_each(windows.size(), [&](std::size_t w) {
    probes[w] = rl::probe_capacity(base, *catalog, workload, windows[w], seed);
    rates[w] = rl::interval_rates(rl_spec, *workload, windows[w]);
  });
  for (std::size_t w = 0; w < windows.size(); ++w) {
    if (!probes[w].error.empty()) return fail(err, windows[w].label + ": capacity probe: " + probes[w].error, kExitBadInput);
    out << "  " << windows[w].label << ": one instance serves " << fixed_text(probes[w].requests_per_s, 3)
        << " requests/s of its length mix when backlogged (the right-sizing bound's capacity; drain "
        << fixed_text(probes[w].drain_s, 1) << " s)\n";
  }

  for (const double delay : delays) {
    configs::ScenarioConfig at_delay = base;
    at_delay.scaling.manager.scale_up_delay = engine::SimTime::from_seconds(delay);
    for (const Outcome& o : tuned_static->sizes) tuning_row(delay, o, o.parameter == start);
    // Every adaptive baseline at every parameter on the training windows, from the tuned
    // static size; each family keeps the parameter the protocol picks.
    std::vector<Contender> adaptive;
    std::vector<std::size_t> family_of;
    // The oracle is tuned the same way (its last family) but judged apart, as a bound.
    auto families = rl::adaptive_baselines(options.grids);
    families.push_back(rl::oracle_bound(options.grids));
    for (std::size_t f = 0; f < families.size(); ++f) {
      for (const double parameter : families[f].parameters) {
        Contender c{families[f].policy, parameter, at_delay, true, nullptr};
        families[f].apply(c.config, parameter);
        adaptive.push_back(std::move(c));
        family_of.push_back(f);
      }
    }
    const std::vector<std::uint32_t> adaptive_starts(adaptive.size(), start);
    const std::vector<Outcome> adaptive_tuning =
        play_all(pool, adaptive, adaptive_starts, tuning, *catalog, *recipe_workload, delay, seed);
    if (const Outcome* failed = first_error(adaptive_tuning)) return failure(*failed);
    std::vector<std::size_t> tuned_index;  // each family's pick, an index into `adaptive`
    for (std::size_t f = 0; f < families.size(); ++f) {
      std::vector<Outcome> family;
      std::vector<std::size_t> index;
      for (std::size_t c = 0; c < adaptive.size(); ++c) {
        if (family_of[c] != f) continue;
        family.push_back(pooled_plays(adaptive_tuning, c, tuning.size()));
        index.push_back(c);
      }
      const int chosen = rl::pick(family, rl_spec.slo_target);
      for (std::size_t i = 0; i < family.size(); ++i) tuning_row(delay, family[i], static_cast<int>(i) == chosen);
      if (chosen >= 0) tuned_index.push_back(index[static_cast<std::size_t>(chosen)]);
    }
    // On the evaluated windows, each once: the tuned static size, every target tracking
    // parameter (each metric's front, its tuned one among them: "equal SLO" is read off
    // the front), and the other families' picks. Every family picks one parameter (its
    // grid is not empty), so the oracle is the last pick.
    const auto tracking = [&](std::size_t c) { return adaptive[c].policy.starts_with("target_tracking"); };
    std::vector<Contender> contenders{Contender{"static", double(start), base, false, nullptr}};
    std::vector<std::size_t> slot(adaptive.size(), 0);  // where adaptive[c] plays among `contenders` (0: not)
    for (std::size_t c = 0; c < adaptive.size(); ++c) {
      if (!tracking(c) && std::find(tuned_index.begin(), tuned_index.end(), c) == tuned_index.end()) continue;
      slot[c] = contenders.size();
      contenders.push_back(adaptive[c]);
    }
    const std::vector<std::uint32_t> starts(contenders.size(), start);
    const std::vector<Outcome> played = play_all(pool, contenders, starts, windows, *catalog, workload, delay, seed);
    if (const Outcome* failed = first_error(played)) return failure(*failed);
    // The policies, each window with its own actor.
    std::vector<Outcome> trained(policies.size() * windows.size());
    pool.for_each(trained.size(), [&](std::size_t i) {
      const std::size_t p = i / windows.size(), w = i % windows.size();
      const Contender c{policies[p].name, rl::kNoParameter, at_delay, false, &actors[p][w]};
      trained[i] = rl::play(c, *catalog, workload, windows[w], delay, start, seed);
    });
    for (std::size_t i = 0; i < trained.size(); ++i) {
      if (!trained[i].error.empty()) {
        return fail(err, policies[i / windows.size()].source + ": " + trained[i].error, kExitBadInput);
      }
    }
    // The right-sizing bound at every utilisation in both forms.
    const std::vector<double>& utilisations = options.grids.bound_utilisations;
    const std::array forms{rl::BoundForm::kHindsight, rl::BoundForm::kSmoothed};
    // Bound plays, window-major: window, form, utilisation.
    const std::size_t per_window = forms.size() * utilisations.size();
    std::vector<Outcome> bound_plays(windows.size() * per_window);
    pool.for_each(bound_plays.size(), [&](std::size_t i) {
      const std::size_t w = i / per_window, f = i % per_window / utilisations.size(), u = i % utilisations.size();
      const auto sizes = rl::bound_schedule(at_delay, rates[w], probes[w], utilisations[u], forms[f], delay, start);
      bound_plays[i] = rl::play_schedule(rl::bound_name(forms[f]), utilisations[u], at_delay, *catalog, workload,
                                         windows[w], delay, start, seed, sizes);
    });
    // A scenario with several pools has no bound (it schedules one pool): noted, not fatal.
    const bool bounded = first_error(bound_plays) == nullptr;
    if (!bounded) err << "note: no right-sizing bound: " << first_error(bound_plays)->error << '\n';

    for (std::size_t w = 0; w < windows.size(); ++w) {
      const EvalWindow& window = windows[w];
      const auto at = [&](const std::vector<Outcome>& all, std::size_t c) -> const Outcome& {
        return all[c * windows.size() + w];
      };
      std::vector<Outcome> tuned{at(played, 0)}, hindsight;
      for (std::size_t k = 0; k + 1 < tuned_index.size(); ++k) tuned.push_back(at(played, slot[tuned_index[k]]));
      for (const auto& plays : hindsight_statics) hindsight.push_back(plays[w]);
      const Outcome& oracle_play = at(played, slot[tuned_index.back()]);
      rl::Fronts fronts;
      for (std::size_t c = 0; c < adaptive.size(); ++c) {
        if (tracking(c)) fronts.tracking.push_back(at(played, slot[c]));
      }
      for (std::size_t k = 0; bounded && k < per_window; ++k) {
        const Outcome& o = bound_plays[w * per_window + k];
        (k < utilisations.size() ? fronts.bound_hindsight : fronts.bound_smoothed).push_back(o);
      }
      for (const Outcome& o : tuned) eval_csv.stream() << eval_row(window, delay, o, "tuned", rl_spec.slo_target);
      for (const Outcome& o : fronts.tracking) eval_csv.stream() << eval_row(window, delay, o, "front", rl_spec.slo_target);
      for (const auto* bound : {&fronts.bound_hindsight, &fronts.bound_smoothed}) {
        for (const Outcome& o : *bound) eval_csv.stream() << eval_row(window, delay, o, "bound", rl_spec.slo_target);
      }
      eval_csv.stream() << eval_row(window, delay, oracle_play, "oracle", rl_spec.slo_target);
      for (const Outcome& o : hindsight) eval_csv.stream() << eval_row(window, delay, o, "hindsight", rl_spec.slo_target);
      std::vector<const Outcome*> drawn;
      for (std::size_t p = 0; p < policies.size(); ++p) drawn.push_back(&at(trained, p));
      for (const Outcome& o : tuned) drawn.push_back(&o);
      drawn.push_back(&oracle_play);
      for (std::size_t d = 0; d < drawn.size(); ++d) {
        const Outcome* o = drawn[d];
        if (d < policies.size()) eval_csv.stream() << eval_row(window, delay, *o, "policy", rl_spec.slo_target);
        for (std::size_t s = 0; s < o->instances.size(); ++s) {
          series.stream() << window.label << ',' << number_text(delay) << ',' << display_name(*o) << ','
                          << number_text(interval_s * static_cast<double>(s + 1)) << ',' << number_text(o->instances[s])
                          << '\n';
        }
      }

      out << '\n' << window.label << " [" << number_text(window.covers().from_s) << ", "
          << number_text(window.covers().to_s) << ") s";
      if (window.rate_scale != 1.0) out << " at " << number_text(window.rate_scale) << "x its rate";
      out << ", scale-up delay " << number_text(delay) << " s; adaptive policies start at " << start << " instance"
          << (start == 1 ? "" : "s") << " per pool (the tuned static size)\n";
      std::vector<const Outcome*> rows;
      for (std::size_t p = 0; p < policies.size(); ++p) rows.push_back(&at(trained, p));
      for (const Outcome& o : tuned) rows.push_back(&o);
      rows.push_back(&oracle_play);
      const int width = name_width(rows);
      char line[256];
      std::snprintf(line, sizeof line, " %8s %10s %10s %9s %8s %9s %11s\n", "SLO", "TTFT p99", "TBT p99", "GPU-h",
                    "inst", "actions/h", "reward");
      out << "  " << std::string("policy").append(static_cast<std::size_t>(width) - 6, ' ') << line;
      for (std::size_t p = 0; p < policies.size(); ++p) print_table_row(out, at(trained, p), "", width);
      for (const Outcome& o : tuned) print_table_row(out, o, "tuned", width);
      print_table_row(out, oracle_play, "heuristic: instant, knows the future", width);
      out << "  hindsight static sizes (a bound: chosen on this window):";
      for (const Outcome& o : hindsight) {
        out << ' ' << parameter_text(o) << ": " << percent_text(o.slo_attainment) << " / " << fixed_text(o.gpu_hours)
            << ';';
      }
      out << '\n';
      for (const auto* bound : {&fronts.bound_hindsight, &fronts.bound_smoothed}) {
        if (bound->empty()) continue;
        out << "  " << bound->front().policy << " (a bound: right-sizing with the load known, by utilisation):";
        for (const Outcome& o : *bound) {
          out << ' ' << parameter_text(o) << ": " << percent_text(o.slo_attainment) << " / " << fixed_text(o.gpu_hours)
              << ';';
        }
        out << '\n';
      }
      for (std::size_t p = 0; p < policies.size(); ++p) {
        const Outcome& o = at(trained, p);
        const rl::Verdict v = rl::judge(o, tuned, hindsight, fronts, rl_spec.slo_target);
        const Outcome* rival = v.rival >= 0 ? &tuned[static_cast<std::size_t>(v.rival)] : nullptr;
        const Outcome* cheapest =
            v.cheapest_meeting >= 0 ? &tuned[static_cast<std::size_t>(v.cheapest_meeting)] : nullptr;
        out << "  " << o.policy << ": " << verdict_text(o, v, cheapest, bounded, rl_spec.slo_target) << '\n';
        const auto name_of = [](const Outcome* x) { return x ? display_name(*x) : std::string(); };
        const auto slo_of = [](const Outcome* x) { return x ? number_text(x->slo_attainment) : std::string(); };
        const auto gpu_of = [](const Outcome* x) { return x ? number_text(x->gpu_hours) : std::string(); };
        verdicts_csv.stream() << window.label << ',' << number_text(delay) << ',' << o.policy << ','
                              << number_text(o.slo_attainment) << ',' << number_text(o.gpu_hours) << ','
                              << number_text(o.actions_per_hour) << ',' << name_of(rival) << ',' << slo_of(rival) << ','
                              << gpu_of(rival) << ',' << optional_text(v.saving_vs_rival) << ',' << name_of(cheapest)
                              << ',' << slo_of(cheapest) << ',' << gpu_of(cheapest) << ','
                              << optional_text(v.cost_ratio) << ',' << optional_text(v.front_gpu_hours) << ','
                              << optional_text(v.saving_vs_front) << ',' << optional_text(v.tracking_front_gpu_hours)
                              << ',' << optional_text(v.saving_vs_tracking_front) << ','
                              << optional_text(v.bound_gpu_hours) << ',' << optional_text(v.bound_smoothed_gpu_hours)
                              << ',' << optional_text(v.gap_closed) << ',' << optional_text(v.gap_closed_smoothed) << ','
                              << number_text(oracle_play.slo_attainment) << ',' << number_text(oracle_play.gpu_hours)
                              << '\n';
      }
    }
  }
  for (AtomicFile* file : {&tuning_csv, &eval_csv, &verdicts_csv, &series}) {
    if (const Status written = file->commit(); !written) return fail(err, written.error().message, kExitOutputError);
  }
  out << "\noutputs       " << tuning_csv.path() << ", " << eval_csv.path() << ", " << verdicts_csv.path() << ", "
      << series.path();
  if (options.plot) {
    const std::string png = (fs::path(options.out_dir) / "eval.png").string();
    if (run_plot_script("plot_eval.py", {options.out_dir, "--out", png})) {
      out << ", " << png;
    } else {
      err << "note: no eval.png (tools/plot_eval.py needs python3-matplotlib)\n";
    }
  }
  out << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
