#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sim/autoscale/target_tracking.hpp"
#include "sim/run/scenario_run.hpp"
#include "rl/env/observation.hpp"
#include "rl/env/reward.hpp"
#include "sim/engine/rng.hpp"
#include "traces/episode_workload.hpp"

namespace meshsim::rl {

using engine::SimTime;

// What a step (or reset) reports beside the observation: the interval that just played
// out (for reset, the warm-up) and the episode so far.
struct EnvInfo {
  double window_start_s = 0.0;  // where the episode's window starts in the workload
  double rate_scale = 1.0;
  double scale_up_delay_s = 0.0;  // STARTING -> ACTIVE in this episode
  double sim_seconds = 0.0;     // simulated time at the end of the interval (the warm-up's end at reset)
  std::uint64_t left = 0;       // requests that left in the interval (completed or dropped)
  std::uint64_t slo_met = 0;    // of those, meeting the SLO
  double slo_attainment = 1.0;  // slo_met / left (1 when none left)
  double mean_instances = 0.0;  // instances that existed, mean over the interval
  double gpu_hours = 0.0;       // held by instances since the first decision (after the warm-up)
  std::uint32_t scale_ups = 0, scale_downs = 0, blocked = 0;  // in the step (its action, or an autoscaler)
  std::uint32_t migrations = 0;  // instances the step began moving between prompt and token
  std::uint32_t active = 0, starting = 0, draining = 0;       // now, over all pools
  // Requests waiting past the TTFT target at the interval's end, each by the share of the
  // interval it spent late (rl/env/reward.hpp).
  double late_waiting = 0.0;
  // The reward's terms (reward = -(slo + waiting + cost + churn), rl/env/reward.hpp).
  double slo_penalty = 0.0, waiting_penalty = 0.0, cost_penalty = 0.0, churn_penalty = 0.0;
};

struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // never: autoscaling has no terminal state
  bool truncated = false;   // the episode's window ended (bootstrap the value here)
  EnvInfo info;
};

// Overrides of reset's draws (evaluation on a fixed window).
struct ResetOptions {
  std::optional<double> window_start_s;
  std::optional<double> rate_scale;
  std::optional<double> scale_up_delay_s;
  std::optional<std::uint32_t> start_instances;  // in every group of the start state
  bool operator==(const ResetOptions&) const = default;
};

// Where an environment stands within its episode, for checkpoints: the generator as it
// was before the episode's reset, what reset was given, and the actions since. Replaying
// them (the simulation is deterministic) puts the environment back exactly.
struct EnvCursor {
  engine::Rng::State rng_before_reset{};
  ResetOptions options;
  std::vector<float> actions;  // the episode's actions so far, action_size() per step
};

// The scaling environment (Gymnasium 1.x meanings, no LibTorch): every decision interval
// the agent's action resizes the pools through the ScalingManager, the interval plays
// out, and the agent gets the observation (rl/env/observation.hpp) and the reward
// (rl/env/reward.hpp). An episode replays a window of a trace held in memory (shared
// read-only by every environment), from the scenario's start state; the window's end is
// a truncation.
//
// Actions, one entry per pool (the start state's tags, prompt, token, mixed order):
// continuous: a value in [-1, 1] (clipped) times action_scale_step, rounded, is the
// change of the pool's size (ACTIVE + STARTING); discrete: a choice in [0, 2k] (rounded,
// clipped) is the change choice - k, with k = discrete_max_step; target: a choice in
// [0, target_max_instances] (rounded, clipped) is the pool's target size, which it
// approaches by at most target_max_step instances a decision (a target action leaves
// habits of deltas, such as adding under load and then holding, nothing to integrate;
// NaN keeps the size); residual: a choice c in [0, 2k] sets the pool to rl.residual_base's
// target tracking size plus c - k (k = discrete_max_step; NaN keeps the size), so
// the policy learns corrections of a tuned rule (its lead and lag) rather than the whole
// size, and its exploration never random-walks the size. A pool shrinks by first
// taking back scale-ups still STARTING, then draining its least-loaded ACTIVE instances.
// With both a prompt and a token pool, a last entry migrates (ScalingManager::migrate):
// its value times action_mig_step (continuous) or choice - k (discrete), rounded, is the
// number of least-loaded instances moved from prompt to token (negative: token to
// prompt), after the pools' own changes; the first one blocked ends the moves.
// Limits (min_instances_per_pool, max_total_instances) clip an action; the manager
// counts and logs what was blocked, never an error.
class ScalingEnv final : private replay::ReplayObserver {
 public:
  // The scenario must serve with the llm model; its "rl" object (defaults when absent)
  // shapes episodes, actions and reward.
  // With `config_autoscaler`, the scenario's autoscaler (any but none) scales the pools
  // during each interval instead of the agent, whose actions are then best left NaN:
  // evaluation runs baselines through the same episodes and the same reward.
  // `catalog` must outlive the environment (each reset builds a world from it).
  static Expected<std::unique_ptr<ScalingEnv>> create(const configs::ScenarioConfig& config,
                                                      const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                      bool config_autoscaler = false);
  ~ScalingEnv() override;

  bool residual() const { return spec_.action == configs::ActionKind::kResidual; }
  std::size_t observation_size() const {
    return rl::observation_size(pools_.size(), residual(), class_names_.size());
  }
  std::vector<std::string> observation_names() const { return rl::observation_names(layout()); }
  std::vector<std::pair<double, double>> observation_bounds() const { return rl::observation_bounds(layout()); }
  std::size_t action_size() const { return pools_.size() + (migrates_ ? 1 : 0); }
  // Choices per action entry of the discrete (2k + 1) and target (max + 1) kinds.
  std::uint32_t discrete_choices() const {
    return spec_.action == configs::ActionKind::kTarget ? spec_.target_max_instances + 1 : 2 * spec_.discrete_max_step + 1;
  }
  // The choice that keeps a pool as it is meant to be without the policy (residual: the
  // baseline's size), which the policy's initial head favours; -1 for other kinds.
  static std::int64_t neutral_choice(const configs::RlSpec& spec) {
    return spec.action == configs::ActionKind::kResidual ? static_cast<std::int64_t>(spec.discrete_max_step) : -1;
  }
  std::int64_t neutral_choice() const { return neutral_choice(spec_); }
  const configs::RlSpec& spec() const { return spec_; }
  std::span<const cluster::InstanceTag> pools() const { return pools_; }
  std::uint32_t steps_per_episode() const { return steps_per_episode_; }
  // Seconds from the workload's start to its last request.
  double workload_span_s() const { return workload_span_s_; }
  // Decisions in an episode of `spec` (at least one): what steps_per_episode() is.
  static std::uint32_t episode_steps(const configs::RlSpec& spec);

  // Whether reset may take `options`: each value finite and within what a config accepts
  // for it (window_start_s and scale_up_delay_s in [0, 1e12] s, rate_scale in [1e-6, 1e6],
  // start_instances at least 1 and, in every start-state group, within
  // scaling.max_total_instances). The error names the option and its range.
  Status check(const ResetOptions& options) const;
  // Ok when restore() can replay `cursor` here: its options pass check(), its actions are
  // whole steps, at most an episode's, each passing check_action().
  Status check_cursor(const EnvCursor& cursor) const;
  // Ok when `action` is one the policy could have taken: action_size() entries, each NaN
  // (no change) or, for the discrete kinds, a whole choice in [0, discrete_choices()),
  // for the continuous kind, finite (it is clipped to [-1, 1]).
  Status check_action(std::span<const float> action) const;
  // Starts an episode. With a seed, the environment's generator is reseeded from it
  // (Gymnasium's rule); without, it continues. Writes the first observation to `obs`.
  // `options` must pass check().
  EnvInfo reset(std::optional<std::uint64_t> seed, std::span<float> obs, const ResetOptions& options = {});
  // One decision interval. `obs` receives the next observation.
  StepResult step(std::span<const float> action, std::span<float> obs);

  EnvCursor cursor() const { return cursor_; }
  // Puts the environment where `cursor` was taken (same config and workload); writes the
  // current observation to `obs`.
  void restore(const EnvCursor& cursor, std::span<float> obs);

  // The run under way (for evaluation tools and tests).
  const run::ScenarioRun& run() const { return *run_; }

 private:
  ScalingEnv(configs::ScenarioConfig config, const configs::Catalog& catalog, traces::SharedWorkload workload,
             bool config_autoscaler);
  // The hooks of an episode's run over the window [start, start + length x scale).
  run::RunHooks episode_hooks(SimTime start, double rate_scale) const;
  void on_arrival(const traces::TraceRequest& request) override;
  void on_request(const metrics::RequestRecord& record) override;
  // Pool size changes asked by `action` from the pools' sizes now, then the instances to
  // migrate (when migrates_).
  std::vector<std::int64_t> deltas(std::span<const float> action, std::span<const std::int64_t> sizes) const;
  // Residual actions: asks the baseline for each pool's size now (once a decision: it
  // keeps its history), into baseline_view_.
  void update_baseline();
  // Plays the episode up to `to`. A workload that fails mid-episode (a trace file that
  // can no longer be read) throws RangeError naming it and the episode: the run is over
  // then, and acting on it would schedule events in a finished simulation.
  void advance(SimTime to);
  // Starts measuring an interval at `at` (usage, arrivals and the requests that leave).
  void begin_interval(SimTime at);
  // What the interval begun last measured, up to `end` (now); the averages as they stand.
  IntervalStats measure_interval(SimTime end);
  IntervalStats base_stats() const;
  // The reward's late input for the interval ending at `end` (now).
  double late_waiting(SimTime end) const;
  // Where episode time `at` falls in the workload's cycle (rl.phase_period_s), in [0, 1).
  std::optional<double> phase_at(SimTime at) const;

  configs::ScenarioConfig config_;
  const configs::Catalog& catalog_;
  traces::SharedWorkload workload_;
  configs::RlSpec spec_;
  std::vector<cluster::InstanceTag> pools_;
  bool migrates_ = false;  // both a prompt and a token pool: the action's migration entry
  double workload_span_s_ = 0.0;
  double reference_requests_ = 1.0;  // the reward's R
  std::uint32_t steps_per_episode_ = 0;
  engine::Rng rng_;
  std::unique_ptr<run::ScenarioRun> run_;
  EnvCursor cursor_;
  // Residual actions: the episode's target tracking and its sizes for the next decision.
  std::unique_ptr<autoscale::TargetTrackingAutoscaler> baseline_;
  std::vector<BaselineView> baseline_view_;

  // The episode.
  double window_start_s_ = 0.0, rate_scale_ = 1.0, scale_up_delay_s_ = 0.0;
  std::uint32_t step_ = 0;
  SimTime interval_start_;
  cluster::ServingSystem::Usage usage_at_start_;  // at the interval's start
  std::uint64_t arrived_at_start_ = 0;
  double gpu_us_at_first_decision_ = 0.0;
  ArrivalAverages rates_;
  autoscale::WorkMix work_;  // the length mix and burstiness of the recent arrivals and completions
  // Requests that left during the current interval.
  std::uint64_t left_ = 0, met_ = 0;
  metrics::SloBook slos_;  // what judges each request (its class's SLO)
  // Per class of service (none without classes), over the interval.
  std::vector<std::string> class_names_;
  std::vector<std::uint64_t> class_left_, class_met_;
  ObservationLayout layout() const { return ObservationLayout{pools_, residual(), class_names_}; }
  std::vector<double> ttfts_, tbts_;
};

}  // namespace meshsim::rl
