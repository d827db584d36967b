#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "rl/env/scaling_env.hpp"
#include "sim/engine/thread_pool.hpp"

namespace meshsim::rl {

struct VectorEnvOptions {
  std::size_t num_envs = 8;
  unsigned threads = 0;  // counting the caller; 0: one per hardware thread (at most num_envs)
  // The index of the first environment among all of a run's (ranks split one vector):
  // environment i plays member (first_env + i) % k of a mix.
  std::size_t first_env = 0;
  // Same-step (the trainer's) or Gymnasium's default next-step autoreset (below).
  bool next_step_autoreset = false;
};

// N scaling environments stepped together on a thread pool, with Gymnasium 1.x's vector
// meanings and same-step autoreset: a step that truncates an environment's episode
// reports that episode's last observation and info (final_observations, infos) and
// leaves the environment already reset, its next episode's first observation in
// observations(). Environment i is seeded with seed + i by reset(seed); autoresets
// continue each environment's own generator, so the results do not depend on how many
// threads step them or in which order. With next_step_autoreset (Gymnasium's NEXT_STEP,
// which its vector wrappers such as NormalizeObservation require), a truncating step
// leaves the last observation in observations() instead, and the environment's next
// step() starts its next episode (its action ignored, reward 0, no truncation).
//
// Buffers are row-major, one row per environment, owned here and rewritten by each call.
// One scenario and its workload among those a vector of environments mixes.
struct EnvMember {
  configs::ScenarioConfig config;
  traces::SharedWorkload workload;
};

class VectorEnv {
 public:
  // `catalog` must outlive the environments (each reset builds a world from it).
  static Expected<std::unique_ptr<VectorEnv>> create(const configs::ScenarioConfig& config,
                                                     const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                     const VectorEnvOptions& options);
  // Environment i plays members[(options.first_env + i) % members.size()]: one policy trained on several
  // workloads (or deployments) at once. Every member's environment must observe and act
  // alike (the same sizes); the first member's name heads the errors.
  static Expected<std::unique_ptr<VectorEnv>> create(std::span<const EnvMember> members,
                                                     const configs::Catalog& catalog,
                                                     const VectorEnvOptions& options);

  std::size_t num_envs() const { return envs_.size(); }
  std::size_t observation_size() const { return obs_size_; }
  std::size_t action_size() const { return act_size_; }
  unsigned threads() const { return pool_.size(); }
  ScalingEnv& env(std::size_t i) { return *envs_[i]; }
  const ScalingEnv& env(std::size_t i) const { return *envs_[i]; }

  // Starts an episode in every environment (options apply to all of them).
  void reset(std::optional<std::uint64_t> seed, const ResetOptions& options = {});
  // One decision interval in every environment; `actions` has num_envs rows of
  // action_size.
  void step(std::span<const float> actions);

  // Every environment's cursor, and back (checkpoints): restore() leaves observations()
  // as they were when the cursors were taken.
  std::vector<EnvCursor> cursors() const;
  void restore(const std::vector<EnvCursor>& cursors);

  std::span<const float> observations() const { return obs_; }
  // Row i is environment i's last observation of the episode a step truncated (valid
  // where truncations()[i]; the value to bootstrap from).
  std::span<const float> final_observations() const { return final_obs_; }
  std::span<const double> rewards() const { return rewards_; }
  std::span<const std::uint8_t> terminations() const { return terminations_; }
  std::span<const std::uint8_t> truncations() const { return truncations_; }
  // The last step's info per environment (of the interval that played out, also where
  // the episode then ended), or reset's after reset().
  std::span<const EnvInfo> infos() const { return infos_; }

 private:
  VectorEnv(std::vector<std::unique_ptr<ScalingEnv>> envs, unsigned threads, bool next_step_autoreset);

  std::vector<std::unique_ptr<ScalingEnv>> envs_;
  std::size_t obs_size_ = 0, act_size_ = 0;
  engine::ThreadPool pool_;
  std::vector<float> obs_, final_obs_;
  std::vector<double> rewards_;
  std::vector<std::uint8_t> terminations_, truncations_;
  std::vector<EnvInfo> infos_;
  bool next_step_autoreset_ = false;
  std::vector<std::uint8_t> reset_next_;  // next-step autoreset: the episode ended at the last step
};

}  // namespace meshsim::rl
