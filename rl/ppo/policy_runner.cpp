#include "rl/ppo/policy_runner.hpp"

#include <algorithm>
#include <fstream>

#include "rl/ppo/checkpoint_folder.hpp"
#include "rl/ppo/checkpoint_state.hpp"
#include "rl/ppo/eigen_policy.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy.hpp"
#include "rl/ppo/torch_message.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::rl {

struct PolicyRunner::Impl {
  ActorCritic policy{nullptr};
  // The forward pass runs on a plain copy of the weights: no LibTorch operator (nor the
  // BLAS below it, whose serial build is not safe to call from two threads at once), so
  // runners act in parallel, and faster.
  EigenPolicy eigen;
  std::optional<ObservationNormalizer> normalizer;
  std::vector<float> normalized;
  configs::RlSpec spec;
  std::vector<configs::RlSpec> train_also;
};

PolicyRunner::PolicyRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PolicyRunner::~PolicyRunner() = default;

Expected<std::unique_ptr<PolicyRunner>> PolicyRunner::load(const std::filesystem::path& checkpoint) {
  auto state = read_checkpoint_state(checkpoint / kCheckpointStateFile);
  if (!state) return state.error();
  auto impl = std::make_unique<Impl>();
  impl->spec = state->rl;
  impl->train_also = state->train_also_rl;
  try {
    impl->policy = ActorCritic(state->policy);
    torch::load(impl->policy, (checkpoint / "policy.pt").string());
  } catch (const std::exception& e) {  // LibTorch's errors
    return Error{checkpoint.string() + ": not a readable policy checkpoint: " + torch_message(e)};
  }
  if (state->normalize_observations) {
    impl->normalizer.emplace(static_cast<std::size_t>(state->policy.observations), state->observation_clip);
    impl->normalizer->stats() = std::move(state->observation_stats);
  }
  impl->normalized.resize(static_cast<std::size_t>(impl->policy->shape().observations));
  impl->eigen = impl->policy->to_eigen();
  return std::unique_ptr<PolicyRunner>(new PolicyRunner(std::move(impl)));
}

std::size_t PolicyRunner::observation_size() const { return static_cast<std::size_t>(impl_->policy->shape().observations); }
std::size_t PolicyRunner::action_size() const { return static_cast<std::size_t>(impl_->policy->shape().actions); }
bool PolicyRunner::discrete() const { return impl_->policy->discrete(); }
const configs::RlSpec& PolicyRunner::trained_spec() const { return impl_->spec; }
const std::vector<configs::RlSpec>& PolicyRunner::train_also_specs() const { return impl_->train_also; }

void PolicyRunner::act(std::span<const float> obs, std::span<float> action) {
  MESHSIM_CHECK(obs.size() == observation_size() && action.size() == action_size(),
                "PolicyRunner::act: observation or action size differs from the policy's");
  if (impl_->normalizer) {
    impl_->normalizer->normalize(obs, impl_->normalized);
  } else {
    std::copy(obs.begin(), obs.end(), impl_->normalized.begin());
  }
  const RowMatrix& out = impl_->eigen.actor_output(impl_->normalized, 1);
  if (!discrete()) {
    std::copy_n(out.data(), action.size(), action.begin());
    return;
  }
  // The most likely choice of each entry (the first of equals, as torch's argmax).
  const auto choices = static_cast<std::size_t>(impl_->policy->shape().choices);
  for (std::size_t a = 0; a < action.size(); ++a) {
    const float* logits = out.data() + a * choices;
    action[a] = static_cast<float>(std::max_element(logits, logits + choices) - logits);
  }
}

}  // namespace meshsim::rl
