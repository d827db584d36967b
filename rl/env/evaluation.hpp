#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/thread_pool.hpp"
#include "traces/episode_workload.hpp"

namespace meshsim::rl {

// The evaluation protocol (`meshsim eval`, checkpoint selection in `meshsim train`):
// a recipe splits its workload into training windows, validation spans and test spans
// (configs::RlSpec). Every baseline's parameter is tuned on training windows only, then
// applied to the evaluated windows; every adaptive policy starts an evaluated window from
// the same state (the tuned static size); the static sizes chosen in hindsight on the
// evaluated window are a bound, shown apart.

// One window of play: where it starts in the workload, how long it plays (simulated
// seconds) and at what multiple of the workload's rate.
struct EvalWindow {
  std::string label;
  double start_s = 0.0, length_s = 0.0, rate_scale = 1.0;
  // The workload time the window replays.
  configs::TimeSpan covers() const { return {start_s, start_s + length_s * rate_scale}; }
};

// rl.tuning_windows windows of episode_s at rate scale 1, evenly spaced over the training
// starts [windows_from_s, windows_to_s] (the starts' range to the workload's end without
// windows_to_s), labelled "tuning 1", "tuning 2", ...
std::vector<EvalWindow> tuning_windows(const configs::RlSpec& spec, double workload_span_s);
// One window per span, labelled "<name> 1", "<name> 2", ...
std::vector<EvalWindow> span_windows(const std::vector<configs::TimeSpan>& spans, const std::string& name);
// The scale-up delays a recipe trains at (rl.scale_up_delays_s), else the scenario's one:
// what checkpoints are chosen on and policies judged at by default.
std::vector<double> trained_delays(const configs::ScenarioConfig& config);
// Empty when `window` may be judged on; else why not: it replays workload time the
// training windows cover.
std::string check_held_out(const configs::RlSpec& spec, const EvalWindow& window);

// Something that picks actions from observations (a trained policy).
using Actor = std::function<void(std::span<const float> obs, std::span<float> action)>;

inline constexpr double kNoParameter = std::numeric_limits<double>::quiet_NaN();

// A policy to play: the scenario's autoscaler (a baseline at `parameter`), an actor, or
// nobody (the start size held: a static baseline).
struct Contender {
  std::string policy;  // static | elastic | target_tracking_* | oracle | ppo...
  double parameter = kNoParameter;
  configs::ScenarioConfig config;
  bool autoscaler = false;
  const Actor* actor = nullptr;
};

// What one play (or several pooled) measured.
struct Outcome {
  std::string policy;
  double parameter = kNoParameter;
  std::string error;  // the play failed: nothing else is set
  std::uint32_t start_instances = 0;
  // Requests judged (those that left the system less those refused for their length, and
  // those still awaiting a first token past the TTFT target), and those meeting the SLO.
  std::uint64_t left = 0, slo_met = 0;
  std::uint64_t arrived = 0, completed = 0;
  double slo_attainment = 0, ttft_p50 = 0, ttft_p99 = 0, tbt_p50 = 0, tbt_p99 = 0, e2e_p50 = 0;
  double gpu_hours = 0, mean_instances = 0, reward = 0, actions_per_hour = 0, hours = 0;
  std::uint64_t scale_ups = 0, scale_downs = 0;
  std::vector<double> instances;  // mean per decision interval
};

// Plays `window` as one episode of the scenario's environment at `delay_s`, from
// `start_instances` ACTIVE in every start-state group.
Outcome play(const Contender& contender, const configs::Catalog& catalog, const traces::SharedWorkload& workload,
             const EvalWindow& window, double delay_s, std::uint32_t start_instances, std::uint64_t seed);

// The plays of static sizes 1, 2, ... by size, then window.
using StaticPlays = std::vector<std::vector<Outcome>>;
// The static sizes 1, 2, ... max_size, each held on every window (a static size never
// scales, so the delay does not matter), in batches of the pool's threads; the sweep
// stops after a batch once `enough` holds for the sizes so far (larger ones only cost
// more), or a play failed.
StaticPlays sweep_statics(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                          const traces::SharedWorkload& workload, const std::vector<EvalWindow>& windows,
                          std::uint32_t max_size, const std::function<bool(const StaticPlays&)>& enough,
                          engine::ThreadPool& pool);
// sweep_statics' rules: the tuned size is the first whose pooled plays reach `slo_target`;
// the hindsight front is complete once, on every window, the largest size reaches
// `slo_target` and it and the size before each gained less than 0.01 points of SLO
// attainment over their predecessor.
bool reaches_target(const StaticPlays& so_far, double slo_target);
bool front_saturated(const StaticPlays& so_far, double slo_target);

// The static size the protocol tunes on the recipe's training windows (config.rl's
// tuning windows and slo_target), where every adaptive policy starts: the sizes swept,
// each pooled over the windows, and the one picked.
struct TunedStatic {
  std::vector<Outcome> sizes;  // sizes 1, 2, ... as far as the sweep went
  std::uint32_t size = 1;
};
Expected<TunedStatic> tune_static_size(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                       const traces::SharedWorkload& workload, std::uint32_t max_size,
                                       engine::ThreadPool& pool);

// Several plays of one contender as one: requests, GPU-hours, reward and actions added
// (SLO attainment over all requests, instances and actions per hour over all hours);
// latency quantiles are the worst window's.
Outcome pooled(const std::vector<Outcome>& plays);

// The protocol's choice among a baseline's parameters (their pooled plays): the cheapest
// in GPU-hours whose SLO attainment reaches `slo_target`, else the highest attainment
// (ties to the cheaper). Failed plays are never chosen; -1 when all failed.
int pick(const std::vector<Outcome>& candidates, double slo_target);

// The same choice among candidates each played on several recipes' spans (a candidate's
// plays, pooled per recipe, in the order of `slo_targets`): the cheapest in GPU-hours
// over all recipes whose attainment reaches every recipe's target, else the one whose
// worst shortfall is least (ties to the cheaper). Each recipe is held to its own target,
// so a recipe with many requests cannot buy another's SLO. pick() is its one-recipe case.
int pick_per_recipe(const std::vector<std::vector<Outcome>>& candidates, const std::vector<double>& slo_targets);

// A baseline and the parameters it is tuned over.
struct BaselineFamily {
  std::string policy;
  std::vector<double> parameters;
  std::function<void(configs::ScenarioConfig&, double)> apply;  // sets the autoscaler at a parameter
  std::optional<autoscale::TrackedMetric> tracked = {};          // one-metric target tracking's metric
};
struct BaselineGrids {
  std::vector<double> kv_targets = {0.5, 0.6, 0.7, 0.8, 0.9};
  std::vector<double> request_targets = {4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  // requests/s per instance; up to 45 for short requests (ServeGen's m-small tunes to 32)
  std::vector<double> rate_targets = {0.25, 0.35, 0.5, 0.7, 1, 1.4, 2, 2.8, 4, 5.6, 8, 11, 16, 22, 32, 45};
  std::vector<double> token_targets = {250, 500, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000, 11000, 16000, 32000};
  std::vector<double> elastic_capacities = {4, 8, 16, 32, 64, 128, 256};  // requests per worker
  // The oracle's target utilisation of its capacity estimate: tuned like a baseline's
  // parameter, so the bound is the cheapest oracle reaching the SLO target (at a fixed
  // 0.8 it reached only 96% on ServeGen's days and bounded nothing at 99%).
  std::vector<double> oracle_utilisations = {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  // The right-sizing bound's utilisations of the capacity measured at the SLO target,
  // swept into its front: below 1 the schedule holds spare room, above 1 it trades SLO
  // attainment below the target for GPU-hours (so the front reaches policies' lower SLOs).
  std::vector<double> bound_utilisations = {0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5};
  // Multi-metric target tracking's common scale of the one-metric families' tuned
  // targets: the largest of several recommendations sizes above each alone, so it is
  // tuned by loosening them together.
  std::vector<double> multi_metric_scales = {1.0, 1.25, 1.6, 2.0, 2.5};
  // How many prices of a miss the priced bound is swept over (quantiles of the prices
  // at which a stretch's cheapest size changes: rl/env/bound_plays.hpp).
  std::size_t bound_prices = 24;
  // Capacity-units target tracking (the work-aware challenger, judged like a policy
  // against the tuned families' fronts): its targets, fractions of the model's SLO
  // capacity, tuned over; played only with a model.
  std::vector<double> capacity_targets = {0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.15, 1.3};
  std::shared_ptr<const autoscale::CapacityModel> capacity_model = nullptr;
  std::string capacity_model_path = {};
};
// Capacity-units target tracking's policy name ("_corrected" added with the online
// correction): a challenger, not one of the tuned families whose front it is judged
// against. Its miss budget is the recipe's (1 - rl.slo_target).
inline constexpr std::string_view kCapacityTrackingPolicy = "capacity_tracking";
// The adaptive baselines: elastic over its capacity per worker (up to the scaling limit's
// workers), target tracking on KV use, requests per instance, arrival rate and token
// rate per instance; with a capacity model, capacity-units target tracking last.
std::vector<BaselineFamily> adaptive_baselines(const BaselineGrids& grids);
// Multi-metric target tracking ("target_tracking_multi"): every metric of `tuned` at its
// target times the parameter, the largest recommendation winning, as Kubernetes combines
// metrics; over `scales`.
BaselineFamily multi_metric_baseline(const std::vector<autoscale::TrackedTarget>& tuned,
                                     const std::vector<double>& scales);
// The oracle (a heuristic: instant scaling with the load ahead known, sized by a
// utilisation of the performance model's estimate; not a baseline) over its utilisation.
BaselineFamily oracle_bound(const BaselineGrids& grids);

// A front's GPU-hours at SLO attainment `slo`: the plays' (any order; failed ones left
// out), made monotone (more GPU-hours never count as worse), interpolated linearly in log
// miss rate between the two plays around `slo`; the cheapest play's when `slo` is below
// it; unset above the best play's attainment. The hindsight static sizes, a target
// tracking's grid played on the window and the right-sizing bound's utilisations are
// each such a front.
std::optional<double> front_gpu_hours(const std::vector<Outcome>& plays, double slo);

// The fronts a policy is read against on one window: every target tracking parameter
// played there (policies starting with "target_tracking", one front per policy), every
// static size (chosen in hindsight on the window), and the right-sizing bound in its forms
// (rl/env/bound_plays.hpp); any may be empty.
struct Fronts {
  std::vector<Outcome> tracking, statics, bound_hindsight, bound_smoothed, bound_priced;
};

// How a policy's play on one window compares (GPU-hour savings are 1 - policy / other:
// positive when the policy uses fewer).
struct Verdict {
  int rival = -1;  // the cheapest tuned baseline with at least the policy's SLO attainment (-1: none)
  std::optional<double> saving_vs_rival;
  // The cheapest tuned baseline meeting the SLO target on the window (-1: none), and the
  // policy's GPU-hours as a multiple of its.
  int cheapest_meeting = -1;
  std::optional<double> cost_ratio;
  std::optional<double> front_gpu_hours;  // the hindsight static front at the policy's SLO attainment
  std::optional<double> saving_vs_front;
  // The cheapest target tracking front at the policy's SLO attainment ("equal SLO" read
  // off the grid played on the window, not one tuned value), and the saving against it.
  std::optional<double> tracking_front_gpu_hours;
  std::optional<double> saving_vs_tracking_front;
  // The right-sizing bound's fronts at the policy's SLO attainment (full hindsight, and
  // smoothed: see bound_at), and the share of the GPU-hour gap from the tracking front
  // down to each that the policy closes (when the bound is cheaper by at least kLeastGap
  // of the front): 1 at the bound, 0 at target tracking, negative above it.
  std::optional<double> bound_gpu_hours, bound_smoothed_gpu_hours;
  std::optional<double> gap_closed, gap_closed_smoothed;
};
inline constexpr double kLeastGap = 0.01;

// Target tracking's front at SLO attainment `slo`: the cheapest metric's (unset where
// none reaches `slo`).
std::optional<double> tracking_front_at(const Fronts& fronts, double slo);
// The bound at SLO attainment `slo`: the cheaper of its full-hindsight front and its
// smoothed one there (unset where neither reaches `slo`). The full-hindsight front is
// every schedule known in hindsight that was played: the hindsight and priced forms' and
// the static sizes (constant schedules, each starting at its own size where the others
// start at the tuned one).
std::optional<double> bound_at(const Fronts& fronts, double slo);
// A play the bound lies above: it spent fewer GPU-hours than the bound at its own SLO
// attainment. A bound that is one has none; each is a defect of the bound, reported.
struct BoundDefect {
  const Outcome* play = nullptr;
  double bound_gpu_hours = 0.0;
};
std::vector<BoundDefect> bound_defects(const Fronts& fronts, const std::vector<const Outcome*>& plays);
// `tuned`: the tuned baselines' plays on the window.
Verdict judge(const Outcome& policy, const std::vector<Outcome>& tuned, const Fronts& fronts, double slo_target);

}  // namespace meshsim::rl
