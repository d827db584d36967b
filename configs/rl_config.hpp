#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "configs/object_reader.hpp"
#include "sim/autoscale/autoscaler_options.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::configs {

using engine::SimTime;

// How an action entry moves its pool (rl/env/scaling_env.hpp): by a change of size
// (continuous or discrete), to a target size (a discrete choice), rate-limited, or by a
// correction of a target tracking baseline's size (residual: a discrete choice).
enum class ActionKind { kContinuous, kDiscrete, kTarget, kResidual };
inline constexpr EnumNames kActionKindNames{std::array{std::pair{ActionKind::kContinuous, std::string_view("continuous")},
                                                       std::pair{ActionKind::kDiscrete, std::string_view("discrete")},
                                                       std::pair{ActionKind::kTarget, std::string_view("target")},
                                                       std::pair{ActionKind::kResidual, std::string_view("residual")}}};
// Whether the policy picks among choices (a categorical head per entry).
inline bool chooses(ActionKind kind) { return kind != ActionKind::kContinuous; }

// The reward's weights; rl/env/reward.hpp has the formula and what each term counts.
// With the defaults, holding one instance for an interval costs as much as 1% of an
// interval's mean requests missing their SLO: "always max" pays for 100 instances,
// "always min" misses the SLO.
struct RewardWeights {
  double slo_weight = 1.0;
  double waiting_weight = 1.0;
  double cost_weight = 0.01;
  double churn_weight = 0.001;
};

// PPO's hyperparameters (rl/ppo), defaults after CleanRL's ppo_continuous_action adapted
// to short rollouts of cheap environments. One iteration collects rollout_steps decisions
// from each of num_envs environments, then runs update_epochs passes of minibatches over
// them.
struct PpoSpec {
  std::uint32_t num_envs = 8;
  std::uint32_t rollout_steps = 64;        // decisions per environment per iteration
  std::uint64_t total_decisions = 1'000'000;  // over all environments
  double learning_rate = 3e-4;
  bool anneal_lr = true;  // linearly to 0 over the run
  double gamma = 0.99;
  double gae_lambda = 0.95;
  std::uint32_t minibatches = 4;
  std::uint32_t update_epochs = 10;
  bool normalize_advantages = true;
  double clip_coef = 0.2;
  bool clip_value_loss = true;
  double entropy_coef = 0.0;
  double value_coef = 0.5;
  double max_grad_norm = 0.5;
  std::vector<std::uint32_t> hidden = {64, 64};  // both the actor's and the critic's MLP
  // Running normalisation of observations and of rewards (divided by the running standard
  // deviation of the discounted return), each clipped to +-clip afterwards.
  bool normalize_observations = true;
  bool normalize_rewards = true;
  double observation_clip = 10.0;
  double reward_clip = 10.0;
  std::uint32_t checkpoint_every = 50;  // iterations between checkpoints (0: only at the end)
  // PPO-Lagrangian (constrained RL): with a rate > 0 the reward's SLO terms (missed and
  // late requests) are weighed by a multiplier learned by dual ascent, so the policy
  // minimises cost subject to SLO attainment >= rl.slo_target rather than trading them at
  // fixed weights. After each iteration, with v = (target - attainment) / (1 - target)
  // clipped to [-1, 1] (the violation in units of the misses allowed; target:
  // lagrange_target, else rl.slo_target),
  // multiplier *= exp(lagrange_rate * v), kept in [lagrange_min, lagrange_max].
  double lagrange_rate = 0.0;
  // The attainment the multiplier aims for on training rollouts; unset: rl.slo_target.
  // Training episodes may start far from the right size (rl.start_instances, rate scales,
  // delays), where no policy reaches the evaluation's target: the baseline's own
  // attainment on them (a residual recipe's neutral choice) is the level to hold.
  std::optional<double> lagrange_target;
  double lagrange_initial = 1.0;
  double lagrange_min = 0.01, lagrange_max = 1000.0;
  // The training's own seed (the policy's initialisation, episode draws, sampling): `meshsim
  // train --seed` sets it, so the scenario's seed, which draws a synthetic workload, stays
  // the recipe's and every seed's policy trains and is judged on the same load. Unset: the
  // scenario's seed.
  std::optional<std::uint64_t> seed;
  unsigned threads = 0;                 // environment threads (0: one per hardware thread)
};

// A span of workload time, [from_s, to_s) seconds.
struct TimeSpan {
  double from_s = 0.0, to_s = 0.0;
  double length_s() const { return to_s - from_s; }
  bool overlaps(const TimeSpan& other) const { return from_s < other.to_s && other.from_s < to_s; }
};

// The RL environment over a scenario (the "rl" object of a scenario file; the cluster,
// serving model, scaling limits and SLO are the scenario's).
struct RlSpec {
  SimTime decision_interval = SimTime::from_seconds(15);
  // An episode is a window of the workload this long (simulated time); its end is a
  // truncation (the learner bootstraps there), never a termination.
  SimTime episode_length = SimTime::from_seconds(1800);
  // Where windows may start, in workload seconds: [windows_from_s, windows_to_s]; no
  // windows_to_s: the last start that leaves a whole episode.
  double windows_from_s = 0.0;
  std::optional<double> windows_to_s;
  // The recipe's held-out spans of its workload (rl/env/evaluation.hpp): validation picks
  // the checkpoint, test is what `meshsim eval` judges on by default. Neither may
  // overlap the training windows (training_span()).
  std::vector<TimeSpan> validation, test;
  // The SLO attainment a policy must reach: baselines' parameters are tuned to the
  // cheapest one reaching it on the training windows, and the best checkpoint is the
  // cheapest reaching it on validation (the highest attainment when none does).
  double slo_target = 0.99;
  // Training windows (of episode_s, evenly spaced over the training range, at rate scale
  // 1) that the baselines' parameters are tuned on.
  std::uint32_t tuning_windows = 8;
  // Each episode's rate scale is drawn from these (1: the trace as recorded).
  std::vector<double> rate_scales = {1.0};
  // Each episode's scale-up delay (seconds) is drawn from these, so one policy learns to
  // act under several; empty: the scenario's scaling.scale_up_delay_s in every episode.
  std::vector<double> scale_up_delays_s;
  // Each episode's start size (instances in every group of the start state, ACTIVE from
  // the start) is drawn from these, so a policy learns to size the pools from any start,
  // not only to recover from the scenario's; empty: the scenario's start state.
  std::vector<std::uint32_t> start_instances;
  // The period of the workload's cycle, for the phase features (rl/env/observation.hpp):
  // a day for real traces, the generator's period_s for a synthetic cycle; 0: none.
  double phase_period_s = 86'400.0;
  // Played at the start size before the first decision, so the first observation holds
  // real rates and latencies; not counted in the episode's GPU-hours or reward.
  SimTime warmup = SimTime::from_seconds(15);
  ActionKind action = ActionKind::kContinuous;
  double action_scale_step = 5.0;       // instances per 1.0 of a pool's action
  std::uint32_t discrete_max_step = 2;  // discrete actions: -k..k instances per pool (and migration)
  // Target actions: a choice of 0..target_max_instances is the pool's target size (ACTIVE
  // + STARTING), approached by at most target_max_step instances a decision.
  std::uint32_t target_max_instances = 16;
  std::uint32_t target_max_step = 4;
  // Continuous: instances moved between the prompt and token pools per 1.0 of the
  // migration entry (present when the start state has both pools).
  double action_mig_step = 3.0;
  // More recipes (scenario files, each with an rl object; relative paths against this
  // file's folder) whose environments join this training: environment i plays recipe
  // i % (1 + these) (rl/env/vector_env.hpp), this one first; its ppo object trains.
  std::vector<std::string> train_also;
  // Residual actions: the target tracking whose size each decision's choice c in
  // [0, 2 discrete_max_step] corrects by c - discrete_max_step (the middle choice keeps
  // it). It runs warm (its stabilisation window starts at the pool's size) and up to the
  // scaling limit, whatever these fields say.
  autoscale::TargetTrackingConfig residual_base = [] {
    autoscale::TargetTrackingConfig base;
    base.metric = autoscale::TrackedMetric::kArrivalRate;
    base.target = 4.0;
    return base;
  }();
  RewardWeights reward;
  PpoSpec ppo;

  // The workload time training episodes (and the windows baselines are tuned on, at rate
  // 1) may cover: [windows_from_s, windows_to_s + episode_s x max(1, the largest rate
  // scale)), to any time without windows_to_s.
  TimeSpan training_span() const;
};

void parse_rl(ObjectReader& parent, std::optional<RlSpec>& spec, const std::string& base_dir);
nlohmann::json rl_to_json(const RlSpec& spec);
// rl_to_json's inverse (a checkpoint keeps the spec its policy was trained with);
// `where` names the source in errors.
Expected<RlSpec> rl_from_json(const nlohmann::json& tree, const std::string& where);

}  // namespace meshsim::configs
