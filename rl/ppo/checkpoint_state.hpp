#pragma once

// A checkpoint's state.json: everything of a PPO run but the LibTorch archives (policy.pt,
// optimizer.pt). One home for its layout, written by PpoTrainer::save and read, checked
// key by key, by PpoTrainer::load and PolicyRunner::load. No LibTorch here.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "configs/rl_config.hpp"
#include "rl/env/scaling_env.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy_shape.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::rl {

// The layout of state.json; older ones are refused with both numbers.
inline constexpr int kCheckpointFormat = 3;

// One environment's place: its cursor (replayed on load), action generator and the raw
// return of its episode under way.
struct CheckpointEnv {
  EnvCursor cursor;
  engine::Rng::State action_rng{};
  double episode_return = 0.0;
};

struct CheckpointState {
  std::uint64_t seed = 0;
  std::uint32_t iteration = 0;   // done, at most `iterations`
  std::uint32_t iterations = 0;  // the run's total
  std::uint64_t decisions = 0;   // over all environments
  PolicyShape policy;
  configs::RlSpec rl;  // how the policy acts and is rewarded
  // The rl specs of the other recipes it trained on (rl.train_also), in order; absent
  // when there were none.
  std::vector<configs::RlSpec> train_also_rl;
  bool normalize_observations = true;
  double observation_clip = 10.0;
  RunningMeanStd observation_stats;  // of policy.observations features
  std::vector<double> reward_returns;  // one per environment
  RunningMeanStd reward_stats;         // of one value
  engine::Rng::State shuffle_rng{};
  // PPO-Lagrangian's multiplier of the SLO terms (rl.ppo.lagrange_rate > 0); absent in
  // older checkpoints, which trained at fixed weights: 1.
  double lagrange = 1.0;
  std::vector<CheckpointEnv> envs;  // every rank's, in order
};

nlohmann::json to_json(const CheckpointEnv& env);
nlohmann::json to_json(const CheckpointState& state);

// state.json's text checked before anything is used: every key's type and range (counts
// never wrap; numbers finite), sizes that must agree (statistics of the policy's
// observations, one return per environment), the generators' states. The first problem
// is the error, as "FILE: key.path: expected ..., got ...".
Expected<CheckpointState> parse_checkpoint_state(std::string_view text, const std::string& file);
Expected<CheckpointState> read_checkpoint_state(const std::filesystem::path& file);

// What a run fixes (its config, trace and seed) that a checkpoint it resumes must have
// been made with.
struct ResumedRun {
  std::uint64_t seed = 0;
  std::uint32_t iterations = 0;
  std::size_t envs = 0;  // over all ranks
  PolicyShape policy;
  std::vector<configs::RlSpec> specs;  // its own recipe's first, then rl.train_also's
  std::uint64_t decisions_per_iteration = 0;
};
// Whether `state` (read from `file`) resumes `run`; the first difference is the error, as
// "FILE: key: the checkpoint has ..., this run ...". rl.ppo.threads may differ (speed alone).
Status check_resumes(const CheckpointState& state, const ResumedRun& run, const std::string& file);
// The cursors of a rank's environments (`envs`, from `first` among all ranks') that a run
// stepping `steps` times an iteration resumes from `state`, each checked against its
// environment: the episode where the iterations played put it, and no reset options.
Expected<std::vector<EnvCursor>> resumed_cursors(const CheckpointState& state, std::span<const ScalingEnv* const> envs,
                                                 std::size_t first, std::size_t steps, const std::string& file);

}  // namespace meshsim::rl
