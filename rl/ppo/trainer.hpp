#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "configs/scenario_run.hpp"
#include "rl/env/vector_env.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::rl {

// The layout of a checkpoint folder's state.json; older ones are refused with both numbers.
inline constexpr int kCheckpointFormat = 2;

// One PPO iteration's figures (a row of the learning curve). Everything but the timings
// is determined by the config, trace and seed.
struct IterationStats {
  std::uint32_t iteration = 0;    // 1-based
  std::uint64_t decisions = 0;    // over all environments since training began
  double learning_rate = 0.0;
  double mean_reward = 0.0;       // raw reward per decision over the rollout
  std::uint32_t episodes = 0;     // episodes that ended in the rollout
  double mean_episode_return = 0.0;  // their undiscounted raw return (0 when none)
  std::uint64_t requests = 0;     // that left (served or dropped) during the rollout
  double slo_attainment = 1.0;    // of those
  double mean_instances = 0.0;    // per environment, mean over the rollout
  double scaling_actions = 0.0;   // instances added or drained per decision
  double policy_loss = 0.0, value_loss = 0.0, entropy = 0.0;  // means over the minibatches
  double approx_kl = 0.0, clip_fraction = 0.0, explained_variance = 0.0;
  // Wall-clock (not deterministic).
  double rollout_seconds = 0.0, update_seconds = 0.0;
  double decisions_per_s = 0.0;   // of this iteration, updates included
};

// PPO (configs::PpoSpec, CleanRL's ppo_continuous_action details) on a vector of scaling
// environments: each iteration collects rollout_steps decisions from every environment
// with batched inference, computes GAE with bootstrapping at truncations, and runs
// minibatch epochs of Adam on the clipped losses. LibTorch stays behind this header.
//
// Deterministic: the same scenario, trace and seed give the same iterations whatever the
// number of environment threads (torch runs on one intra-op thread; every random draw
// comes from the trainer's own generators, saved in checkpoints).
class PpoTrainer {
 public:
  // The scenario's rl object (with its ppo object) shapes everything.
  static Expected<std::unique_ptr<PpoTrainer>> create(const configs::ScenarioConfig& config,
                                                      const configs::Catalog& catalog, traces::SharedTrace trace,
                                                      std::uint64_t seed);
  ~PpoTrainer();

  std::uint32_t iterations() const;  // the run's total
  std::uint32_t iteration() const;   // done so far
  bool done() const { return iteration() >= iterations(); }
  IterationStats iterate();

  // A checkpoint folder: policy and optimiser (LibTorch archives), normalisers, generator
  // states and environment cursors (state.json). Written to a temporary folder first, so
  // an interrupted save never leaves a half checkpoint in `dir`.
  void save(const std::filesystem::path& dir) const;
  // Continues from a checkpoint saved by a trainer created with the same config, trace and
  // seed: the following iterations equal those of an uninterrupted run.
  Status load(const std::filesystem::path& dir);

  VectorEnv& envs();
  // The rollout's forward passes in LibTorch instead of the Eigen copy of the weights
  // (rl/ppo/eigen_policy.hpp): the baseline train_bench measures the copy against.
  void set_torch_rollout(bool torch_rollout);

 private:
  struct Impl;
  explicit PpoTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshsim::rl
