#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "sim/run/scenario_run.hpp"
#include "rl/env/vector_env.hpp"
#include "rl/ppo/rank_group.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::rl {

// One PPO iteration's figures (a row of the learning curve), over all ranks' environments.
// Everything but the timings is determined by the config, trace and seed.
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
  // PPO-Lagrangian: the multiplier of the SLO terms the rollout was rewarded with (1 at
  // fixed weights), updated after it by the rollout's SLO attainment.
  double lagrange = 1.0;
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
// comes from the trainer's own generators, one per environment for actions, saved in
// checkpoints).
//
// Data-parallel over a RankGroup: rl.ppo.num_envs counts all ranks' environments, rank r
// stepping environments [r n, (r + 1) n) of them (n = num_envs / world size, seeded as the
// same environments of a single process). Each step, the ranks gather observations and
// rewards, so the normalisers see every environment, as in one process; each minibatch is
// the one a single process would draw, every rank computing the gradient of its share
// (over the whole minibatch's size), the gradients summed over the ranks before the
// clipped Adam step. So the ranks' weights stay the same bits (checked after every
// update), and a run on W ranks follows the run of one process up to the order of float
// sums. Checkpoints hold every environment, whatever the world size.
class PpoTrainer {
 public:
  // The scenario's rl object (with its ppo object) shapes everything. Every rank of
  // `group` (null: one process) calls this with the same config, trace and seed (checked).
  static Expected<std::unique_ptr<PpoTrainer>> create(const configs::ScenarioConfig& config,
                                                      const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                      std::uint64_t seed, std::shared_ptr<RankGroup> group = nullptr);
  // One policy trained on a mix of scenarios (rl/env/vector_env.hpp: environment i plays
  // member i % k); the first member's rl object shapes the training.
  static Expected<std::unique_ptr<PpoTrainer>> create(std::span<const EnvMember> members,
                                                      const configs::Catalog& catalog, std::uint64_t seed,
                                                      std::shared_ptr<RankGroup> group = nullptr);
  ~PpoTrainer();

  std::uint32_t iterations() const;  // the run's total
  std::uint32_t iteration() const;   // done so far
  bool done() const { return iteration() >= iterations(); }
  IterationStats iterate();

  // A checkpoint folder: policy and optimiser (LibTorch archives), normalisers, generator
  // states and environment cursors (state.json, rl/ppo/checkpoint_state.hpp). Written
  // whole beside `dir`, then swapped in (rl/ppo/checkpoint_folder.hpp), so an interrupted
  // or failed save (a full disk: an error, never an exception) leaves the previous
  // checkpoint whole. Every rank calls it (the ranks' environments are gathered); rank 0
  // writes.
  Status save(const std::filesystem::path& dir) const;
  // Continues from a checkpoint saved by a trainer created with the same config, trace and
  // seed, on any number of ranks: the following iterations equal those of an uninterrupted
  // run. Every rank reads `dir` (one machine or a shared file system). A checkpoint of
  // another run, or one whose state.json is damaged, is refused naming the key.
  Status load(const std::filesystem::path& dir);

  const RankGroup& group() const;
  // The policy's weights, flattened (identical on every rank).
  std::vector<float> weights() const;

  VectorEnv& envs();  // this rank's
  // The rollout's forward passes in LibTorch instead of the Eigen copy of the weights
  // (rl/ppo/eigen_policy.hpp): the baseline train_bench measures the copy against.
  void set_torch_rollout(bool torch_rollout);

 private:
  struct Impl;
  explicit PpoTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshsim::rl
