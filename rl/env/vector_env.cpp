#include "rl/env/vector_env.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::rl {

Expected<std::unique_ptr<VectorEnv>> VectorEnv::create(const configs::ScenarioConfig& config,
                                                      const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                      const VectorEnvOptions& options) {
  const EnvMember only{config, std::move(workload)};
  return create(std::span(&only, 1), catalog, options);
}

Expected<std::unique_ptr<VectorEnv>> VectorEnv::create(std::span<const EnvMember> members,
                                                      const configs::Catalog& catalog,
                                                      const VectorEnvOptions& options) {
  if (members.empty()) return Error{"a vector of environments needs at least one scenario"};
  const std::string& name = members.front().config.name;
  if (options.num_envs == 0) return Error{name + ": a vector of environments needs num_envs >= 1"};
  std::vector<std::unique_ptr<ScalingEnv>> envs;
  envs.reserve(options.num_envs);
  for (std::size_t i = 0; i < options.num_envs; ++i) {
    const EnvMember& member = members[(options.first_env + i) % members.size()];
    auto env = ScalingEnv::create(member.config, catalog, member.workload);
    if (!env) return env.error();
    const ScalingEnv& first = *(envs.empty() ? *env : envs.front());
    if ((*env)->observation_size() != first.observation_size() || (*env)->action_size() != first.action_size() ||
        (*env)->discrete_choices() != first.discrete_choices()) {
      return Error{member.config.name + ": its environment observes " + std::to_string((*env)->observation_size()) +
                   " features and acts on " + std::to_string((*env)->action_size()) + " values of " +
                   std::to_string((*env)->discrete_choices()) + " choices, " + name + "'s " +
                   std::to_string(first.observation_size()) + ", " + std::to_string(first.action_size()) + " and " +
                   std::to_string(first.discrete_choices()) + ": one policy cannot play both"};
    }
    envs.push_back(std::move(*env));
  }
  unsigned threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : options.threads;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, options.num_envs));
  return std::unique_ptr<VectorEnv>(new VectorEnv(std::move(envs), threads, options.next_step_autoreset));
}

VectorEnv::VectorEnv(std::vector<std::unique_ptr<ScalingEnv>> envs, unsigned threads, bool next_step_autoreset)
    : envs_(std::move(envs)),
      obs_size_(envs_.front()->observation_size()),
      act_size_(envs_.front()->action_size()),
      pool_(threads),
      obs_(envs_.size() * obs_size_, 0.0f),
      final_obs_(envs_.size() * obs_size_, 0.0f),
      rewards_(envs_.size(), 0.0),
      terminations_(envs_.size(), 0),
      truncations_(envs_.size(), 0),
      infos_(envs_.size()),
      next_step_autoreset_(next_step_autoreset),
      reset_next_(envs_.size(), 0) {}

void VectorEnv::reset(std::optional<std::uint64_t> seed, const ResetOptions& options) {
  pool_.for_each(envs_.size(), [&](std::size_t i) {
    const std::optional<std::uint64_t> own = seed ? std::optional(*seed + i) : std::nullopt;
    infos_[i] = envs_[i]->reset(own, std::span(obs_).subspan(i * obs_size_, obs_size_), options);
    rewards_[i] = 0.0;
    terminations_[i] = truncations_[i] = reset_next_[i] = 0;
  });
}

std::vector<EnvCursor> VectorEnv::cursors() const {
  std::vector<EnvCursor> out;
  for (const auto& env : envs_) out.push_back(env->cursor());
  return out;
}

void VectorEnv::restore(const std::vector<EnvCursor>& cursors) {
  MESHSIM_CHECK(cursors.size() == envs_.size(), "VectorEnv::restore: expected " + std::to_string(envs_.size()) +
                                                    " cursors, got " + std::to_string(cursors.size()));
  pool_.for_each(envs_.size(), [&](std::size_t i) {
    envs_[i]->restore(cursors[i], std::span(obs_).subspan(i * obs_size_, obs_size_));
  });
}

void VectorEnv::step(std::span<const float> actions) {
  MESHSIM_CHECK(actions.size() == envs_.size() * act_size_,
                "VectorEnv::step: expected " + std::to_string(envs_.size() * act_size_) + " action values (" +
                    std::to_string(envs_.size()) + " environments x " + std::to_string(act_size_) + "), got " +
                    std::to_string(actions.size()));
  pool_.for_each(envs_.size(), [&](std::size_t i) {
    const auto obs = std::span(obs_).subspan(i * obs_size_, obs_size_);
    if (reset_next_[i]) {  // next-step autoreset: this step starts the next episode
      infos_[i] = envs_[i]->reset(std::nullopt, obs);
      rewards_[i] = 0.0;
      terminations_[i] = truncations_[i] = reset_next_[i] = 0;
      return;
    }
    const StepResult result = envs_[i]->step(actions.subspan(i * act_size_, act_size_), obs);
    rewards_[i] = result.reward;
    terminations_[i] = result.terminated;
    truncations_[i] = result.truncated;
    infos_[i] = result.info;
    if (result.terminated || result.truncated) {
      std::copy(obs.begin(), obs.end(), final_obs_.begin() + static_cast<std::ptrdiff_t>(i * obs_size_));
      if (next_step_autoreset_) {
        reset_next_[i] = 1;
      } else {
        envs_[i]->reset(std::nullopt, obs);
      }
    }
  });
}

}  // namespace meshsim::rl
