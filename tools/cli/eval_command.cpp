#include "tools/cli/eval_command.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <ostream>

#include "configs/scenario_config.hpp"
#include "rl/env/scaling_env.hpp"
#include "rl/ppo/policy_runner.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/engine/thread_pool.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/plot_script.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
constexpr double kNoParameter = std::numeric_limits<double>::quiet_NaN();

// One policy (or baseline at one parameter) to evaluate.
struct Candidate {
  std::string policy;  // ppo | static | elastic | target_tracking_kv | target_tracking_requests | oracle
  double parameter = kNoParameter;  // static size, or target
  configs::ScenarioConfig config;
  bool autoscaler = false;  // the config's autoscaler scales (else the policy, or nobody)
  std::uint32_t start_instances = 1;  // per start-state group, ACTIVE when the window opens
};

struct Outcome {
  std::string policy;
  double parameter = kNoParameter;
  std::string error;  // the run failed: nothing else is set
  double slo_attainment = 0, ttft_p50 = 0, ttft_p99 = 0, tbt_p50 = 0, tbt_p99 = 0;
  double gpu_hours = 0, mean_instances = 0, reward = 0, actions_per_hour = 0;
  std::uint64_t scale_ups = 0, scale_downs = 0;
  std::uint32_t start_instances = 0;
  std::vector<double> instances;  // mean per decision interval
  bool in_table = false;
};

// Plays the window as one episode; `policy` acts when given, else NaN (no change).
Outcome evaluate(const Candidate& c, const configs::Catalog& catalog, const traces::SharedWorkload& workload,
                 double window_start_s, double rate_scale, std::uint64_t seed, rl::PolicyRunner* policy) {
  Outcome o;
  o.policy = c.policy;
  o.parameter = c.parameter;
  o.start_instances = c.start_instances;
  auto env = rl::ScalingEnv::create(c.config, catalog, workload, c.autoscaler);
  if (!env) {
    o.error = env.error().message;
    return o;
  }
  rl::ScalingEnv& e = **env;
  if (policy != nullptr && (policy->observation_size() != e.observation_size() ||
                            policy->action_size() != e.action_size())) {
    o.error = "the policy was trained for " + std::to_string(policy->observation_size()) + " features and " +
              std::to_string(policy->action_size()) + " action entries; this scenario has " +
              std::to_string(e.observation_size()) + " and " + std::to_string(e.action_size());
    return o;
  }
  std::vector<float> obs(e.observation_size());
  std::vector<float> action(e.action_size(), std::numeric_limits<float>::quiet_NaN());
  // The candidate's delay and start, also when the policy trained over several.
  e.reset(seed, obs, {window_start_s, rate_scale, c.config.scaling.manager.scale_up_delay.seconds(), c.start_instances});
  for (;;) {
    if (policy != nullptr) policy->act(obs, action);
    const rl::StepResult step = e.step(action, obs);
    o.reward += step.reward;
    o.instances.push_back(step.info.mean_instances);
    o.gpu_hours = step.info.gpu_hours;
    if (step.truncated) break;
  }
  const auto& metrics = e.run().replay().metrics();
  o.slo_attainment = metrics.slo_attainment();
  const auto ttft = metrics.ttft(), tbt = metrics.tbt();
  o.ttft_p50 = ttft.p50;
  o.ttft_p99 = ttft.p99;
  o.tbt_p50 = tbt.p50;
  o.tbt_p99 = tbt.p99;
  double sum = 0;
  for (const double x : o.instances) sum += x;
  o.mean_instances = o.instances.empty() ? 0.0 : sum / static_cast<double>(o.instances.size());
  const auto& counts = e.run().scaling()->manager().counts();
  o.scale_ups = counts.scale_ups;
  o.scale_downs = counts.scale_downs;
  const double hours = e.spec().episode_length.seconds() / 3600.0;
  o.actions_per_hour = static_cast<double>(o.scale_ups + o.scale_downs + counts.migrations) / hours;
  return o;
}

std::string parameter_text(const Outcome& o) {
  if (std::isnan(o.parameter)) return "";
  if (o.policy == "target_tracking_kv") return number_text(100.0 * o.parameter) + "%";
  return number_text(o.parameter);
}

std::string csv_row(double delay, const Outcome& o) {
  char line[512];
  std::snprintf(line, sizeof line, "%s,%s,%s,%u,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%" PRIu64 ",%" PRIu64 ",%.3f,%.6f,%d\n",
                number_text(delay).c_str(), o.policy.c_str(), std::isnan(o.parameter) ? "" : number_text(o.parameter).c_str(),
                o.start_instances, o.slo_attainment, o.ttft_p50, o.ttft_p99, o.tbt_p50, o.tbt_p99, o.gpu_hours,
                o.mean_instances, o.scale_ups, o.scale_downs, o.actions_per_hour, o.reward, o.in_table ? 1 : 0);
  return line;
}

// The index of the outcome with the highest reward among those of `policy` (or -1).
int best_of(const std::vector<Outcome>& outcomes, const std::vector<std::string>& policies) {
  int best = -1;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& o = outcomes[i];
    if (!o.error.empty() || std::find(policies.begin(), policies.end(), o.policy) == policies.end()) continue;
    if (best < 0 || o.reward > outcomes[static_cast<std::size_t>(best)].reward) best = static_cast<int>(i);
  }
  return best;
}

// The index of the baseline (a policy, not the oracle's bound) with the fewest GPU-hours
// among those attaining at least `slo` (or -1): what a learned policy at `slo` must beat.
int cheapest_baseline_at_least(const std::vector<Outcome>& outcomes, double slo) {
  int best = -1;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const auto& o = outcomes[i];
    if (!o.error.empty() || o.policy == "ppo" || o.policy == "oracle" || o.slo_attainment < slo) continue;
    if (best < 0 || o.gpu_hours < outcomes[static_cast<std::size_t>(best)].gpu_hours) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

int run_eval_command(const EvalCommandOptions& options, std::ostream& out, std::ostream& err) {
  const std::string config_path = options.config_path.empty() ? configs::default_training_path() : options.config_path;
  auto loaded = load_scenario_for_command(config_path, options.trace, options.trace_format, options.seed);
  if (!loaded) return fail(err, loaded.error().message, kExitBadInput);
  configs::ScenarioConfig base = *loaded;
  if (!base.rl) base.rl = configs::RlSpec{};
  if (!(options.window_start_s >= 0) || options.window_start_s > 1e12) {
    return fail(err, "--window-start: expected seconds in [0, 1e12], got " + number_text(options.window_start_s),
                kExitBadInput);
  }
  for (const double d : options.delays_s) {
    if (!(d >= 0) || d > 1e6) return fail(err, "--delays: expected seconds in [0, 1e6], got " + number_text(d), kExitBadInput);
  }

  std::unique_ptr<rl::PolicyRunner> policy;
  if (options.policy) {
    auto runner = rl::PolicyRunner::load(*options.policy);
    if (!runner) return fail(err, runner.error().message, kExitBadInput);
    policy = std::move(*runner);
    // The policy's actions and observations mean what they meant in training, and every
    // run is scored by the reward it was trained for, whatever the evaluated scenario says
    // (the window, its rate and the delay are set below and at each reset).
    base.rl = policy->trained_spec();
  }

  if (options.catalog) base.catalog = *options.catalog;
  auto catalog = configs::load_scenario_catalog(base);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto workload = traces::open_episode_workload(base.workload, base.seed);
  if (!workload) return fail(err, workload.error().message, kExitBadInput);
  if (!((*workload)->requests() > 0)) return fail(err, config_path + ": the workload has no requests", kExitBadInput);
  const double span = (*workload)->span_s();
  if (!(options.rate_scale > 0) || options.rate_scale > 1e6) {
    return fail(err, "--rate-scale: expected a multiple in (0, 1e6], got " + number_text(options.rate_scale),
                kExitBadInput);
  }
  const double window = options.window_s.value_or((span - options.window_start_s) / options.rate_scale);
  if (!(window >= base.rl->decision_interval.seconds()) || window > 1e12) {
    return fail(err, "--window: the evaluated window [" + number_text(options.window_start_s) + ", +" +
                         number_text(window) + ") s must hold at least one decision interval (" +
                         number_text(base.rl->decision_interval.seconds()) + " s); the workload spans " +
                         number_text(span) + " s",
                kExitBadInput);
  }
  base.rl->episode_length = engine::SimTime::from_seconds(window);
  base.rl->windows_from_s = options.window_start_s;  // the one window evaluated (reset names it too)
  base.rl->windows_to_s = options.window_start_s;

  std::error_code mkdir_error;
  fs::create_directories(options.out_dir, mkdir_error);
  if (mkdir_error) return fail(err, options.out_dir + ": " + mkdir_error.message(), kExitOutputError);

  const std::uint32_t max_static = std::min(options.max_static, base.scaling.manager.max_total_instances);
  if (options.start_instances && (*options.start_instances < 1 || *options.start_instances > max_static)) {
    return fail(err, "--start-instances: expected an integer in [1, " + std::to_string(max_static) + "] (the static sizes swept), got " +
                         std::to_string(*options.start_instances), kExitBadInput);
  }
  std::vector<double> delays = options.delays_s;
  if (delays.empty()) delays.push_back(base.scaling.manager.scale_up_delay.seconds());

  AtomicFile csv((fs::path(options.out_dir) / "eval.csv").string());
  csv.stream() << "delay_s,policy,parameter,start_instances,slo_attainment,ttft_p50_s,ttft_p99_s,tbt_p50_s,tbt_p99_s,gpu_hours,"
                  "mean_instances,scale_ups,scale_downs,actions_per_hour,reward,in_table\n";
  AtomicFile series((fs::path(options.out_dir) / "instances.csv").string());
  series.stream() << "delay_s,policy,time_s,instances\n";
  engine::ThreadPool pool(0);
  const double interval_s = base.rl->decision_interval.seconds();

  out << "evaluating on " << (options.trace ? *options.trace : config_path) << ", window ["
      << number_text(options.window_start_s) << ", " << number_text(options.window_start_s + window * options.rate_scale)
      << ") s of the workload";
  if (options.rate_scale != 1.0) out << " at " << number_text(options.rate_scale) << "x its rate (" << number_text(window) << " s)";
  out << '\n';
  for (const double delay : delays) {
    configs::ScenarioConfig at_delay = base;
    at_delay.scaling.manager.scale_up_delay = engine::SimTime::from_seconds(delay);
    // Appends the candidates' outcomes (in parallel); the first failed one, if any.
    const auto evaluate_all = [&](const std::vector<Candidate>& candidates,
                                  std::vector<Outcome>& outcomes) -> const Outcome* {
      const std::size_t first = outcomes.size();
      outcomes.resize(first + candidates.size());
      pool.for_each(candidates.size(), [&](std::size_t i) {
        outcomes[first + i] = evaluate(candidates[i], *catalog, *workload, options.window_start_s, options.rate_scale,
                                       at_delay.seed, nullptr);
      });
      for (std::size_t i = first; i < outcomes.size(); ++i) {
        if (!outcomes[i].error.empty()) return &outcomes[i];
      }
      return nullptr;
    };
    const auto failure = [&](const Outcome& o) {
      return fail(err, o.policy + " " + parameter_text(o) + ": " + o.error, kExitBadInput);
    };
    // Static sizes first: the best of them is where every adaptive policy starts (unless
    // --start-instances says), so none pays the scale-up delay for a start the static
    // baseline never had.
    std::vector<Candidate> statics;
    for (std::uint32_t k = 1; k <= max_static; ++k) statics.push_back(Candidate{"static", double(k), at_delay, false, k});
    std::vector<Outcome> outcomes;
    if (const Outcome* failed = evaluate_all(statics, outcomes)) return failure(*failed);
    const int best_static = best_of(outcomes, {"static"});
    const std::uint32_t start = options.start_instances.value_or(outcomes[static_cast<std::size_t>(best_static)].start_instances);

    std::vector<Candidate> adaptive;
    const auto with = [&](std::string name, double parameter, auto&& change) {
      Candidate c{std::move(name), parameter, at_delay, true, start};
      change(c.config);
      adaptive.push_back(std::move(c));
    };
    with("elastic", kNoParameter,
         [](configs::ScenarioConfig& c) { c.autoscaler.policy = configs::AutoscalerPolicy::kElastic; });
    for (const double target : options.kv_targets) {
      with("target_tracking_kv", target, [&](configs::ScenarioConfig& c) {
        c.autoscaler.policy = configs::AutoscalerPolicy::kTargetTracking;
        c.autoscaler.target_tracking.metric = autoscale::TrackedMetric::kKvUtilisation;
        c.autoscaler.target_tracking.target = target;
      });
    }
    for (const double target : options.request_targets) {
      with("target_tracking_requests", target, [&](configs::ScenarioConfig& c) {
        c.autoscaler.policy = configs::AutoscalerPolicy::kTargetTracking;
        c.autoscaler.target_tracking.metric = autoscale::TrackedMetric::kRequestsPerInstance;
        c.autoscaler.target_tracking.target = target;
      });
    }
    with("oracle", kNoParameter,
         [](configs::ScenarioConfig& c) { c.autoscaler.policy = configs::AutoscalerPolicy::kOracle; });
    if (const Outcome* failed = evaluate_all(adaptive, outcomes)) return failure(*failed);
    if (policy) {
      outcomes.push_back(evaluate(Candidate{"ppo", kNoParameter, at_delay, false, start}, *catalog, *workload,
                                  options.window_start_s, options.rate_scale, at_delay.seed, policy.get()));
      if (!outcomes.back().error.empty()) return fail(err, *options.policy + ": " + outcomes.back().error, kExitBadInput);
    }
    const int best_tracking = best_of(outcomes, {"target_tracking_kv", "target_tracking_requests"});
    const int elastic = best_of(outcomes, {"elastic"});
    const int oracle = best_of(outcomes, {"oracle"});
    const int ppo = best_of(outcomes, {"ppo"});
    std::vector<int> table;
    for (const int i : {ppo, best_static, elastic, best_tracking, oracle}) {
      if (i >= 0) table.push_back(i);
    }
    for (const int i : table) outcomes[static_cast<std::size_t>(i)].in_table = true;
    for (const auto& o : outcomes) {
      csv.stream() << csv_row(delay, o);
      if (!o.in_table) continue;
      for (std::size_t s = 0; s < o.instances.size(); ++s) {
        series.stream() << number_text(delay) << ',' << o.policy << ',' << number_text(interval_s * (s + 1)) << ','
                        << number_text(o.instances[s]) << '\n';
      }
    }

    out << "\nscale-up delay " << number_text(delay) << " s; the adaptive policies start with " << start
        << " instance" << (start == 1 ? "" : "s") << " per pool"
        << (options.start_instances ? "" : " (the best static size)") << "\n";
    char line[320];
    std::snprintf(line, sizeof line, "%-26s %8s %9s %9s %9s %9s %9s %8s %9s %10s\n", "policy", "SLO", "TTFT p50",
                  "TTFT p99", "TBT p50", "TBT p99", "GPU-h", "inst", "actions/h", "reward");
    out << line;
    for (const int i : table) {
      const Outcome& o = outcomes[static_cast<std::size_t>(i)];
      const std::string name = o.policy + (std::isnan(o.parameter) ? "" : " " + parameter_text(o));
      std::snprintf(line, sizeof line, "%-26s %7.2f%% %8.3fs %8.3fs %8.4fs %8.4fs %9.2f %8.2f %9.1f %10.3f\n",
                    name.c_str(), 100.0 * o.slo_attainment, o.ttft_p50, o.ttft_p99, o.tbt_p50, o.tbt_p99, o.gpu_hours,
                    o.mean_instances, o.actions_per_hour, o.reward);
      out << line;
    }
    if (ppo >= 0 && best_tracking >= 0 && oracle >= 0) {
      const double r_tt = outcomes[static_cast<std::size_t>(best_tracking)].reward;
      const double gap = outcomes[static_cast<std::size_t>(oracle)].reward - r_tt;
      const double closed = outcomes[static_cast<std::size_t>(ppo)].reward - r_tt;
      if (gap > 0) {
        std::snprintf(line, sizeof line, "gap closed: %.1f%% of the reward gap between target tracking and the oracle\n",
                      100.0 * closed / gap);
      } else {
        std::snprintf(line, sizeof line, "gap closed: n/a (target tracking's reward is at or above the oracle's)\n");
      }
      out << line;
    }
    if (ppo >= 0) {
      const Outcome& p = outcomes[static_cast<std::size_t>(ppo)];
      const int rival = cheapest_baseline_at_least(outcomes, p.slo_attainment);
      if (rival >= 0) {
        const Outcome& r = outcomes[static_cast<std::size_t>(rival)];
        const std::string name = r.policy + (std::isnan(r.parameter) ? "" : " " + parameter_text(r));
        std::snprintf(line, sizeof line,
                      "vs baselines: the cheapest with at least ppo's SLO attainment is %s (%.2f%%, %.2f GPU-h, "
                      "%.1f actions/h): ppo uses %.1f%% %s GPU-hours\n",
                      name.c_str(), 100.0 * r.slo_attainment, r.gpu_hours, r.actions_per_hour,
                      100.0 * std::abs(1.0 - p.gpu_hours / r.gpu_hours), p.gpu_hours <= r.gpu_hours ? "fewer" : "more");
      } else {
        std::snprintf(line, sizeof line, "vs baselines: none reaches ppo's SLO attainment (%.2f%%)\n",
                      100.0 * p.slo_attainment);
      }
      out << line;
    }
  }
  for (AtomicFile* file : {&csv, &series}) {
    if (const Status written = file->commit(); !written) return fail(err, written.error().message, kExitOutputError);
  }
  out << "\noutputs       " << csv.path() << ", " << series.path();
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
