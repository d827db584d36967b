#include "rl/ppo/policy_runner.hpp"

#include <fstream>

#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy.hpp"
#include "rl/ppo/trainer.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::rl {

struct PolicyRunner::Impl {
  ActorCritic policy{nullptr};
  std::optional<ObservationNormalizer> normalizer;
  std::vector<float> normalized;
  configs::RlSpec spec;
};

PolicyRunner::PolicyRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PolicyRunner::~PolicyRunner() = default;

Expected<std::unique_ptr<PolicyRunner>> PolicyRunner::load(const std::filesystem::path& checkpoint) {
  const auto state_path = checkpoint / "state.json";
  std::ifstream in(state_path);
  if (!in) return Error{state_path.string() + ": cannot read (is " + checkpoint.string() + " a checkpoint folder of meshsim train?)"};
  auto impl = std::make_unique<Impl>();
  try {
    const auto state = nlohmann::json::parse(in);
    if (state.at("format").get<int>() != kCheckpointFormat) {
      return Error{state_path.string() + ": checkpoint format " + state.at("format").dump() + ", this build reads " +
                   std::to_string(kCheckpointFormat) + " (train it again with this build)"};
    }
    const auto& shape = state.at("policy");
    PolicyShape policy_shape{shape.at("observations").get<std::int64_t>(), shape.at("actions").get<std::int64_t>(),
                             shape.at("choices").get<std::int64_t>(),
                             shape.at("hidden").get<std::vector<std::uint32_t>>()};
    auto spec = configs::rl_from_json(state.at("rl"), state_path.string() + " (rl)");
    if (!spec) return spec.error();
    impl->spec = *spec;
    impl->policy = ActorCritic(policy_shape);
    torch::load(impl->policy, (checkpoint / "policy.pt").string());
    if (state.at("normalize_observations").get<bool>()) {
      impl->normalizer.emplace(static_cast<std::size_t>(policy_shape.observations),
                               state.at("observation_clip").get<double>());
      impl->normalizer->stats() = RunningMeanStd::from_json(state.at("observation_stats"));
    }
  } catch (const std::exception& e) {  // nlohmann's and LibTorch's errors alike
    return Error{checkpoint.string() + ": not a readable policy checkpoint: " + e.what()};
  }
  impl->normalized.resize(static_cast<std::size_t>(impl->policy->shape().observations));
  torch::set_num_threads(1);
  return std::unique_ptr<PolicyRunner>(new PolicyRunner(std::move(impl)));
}

std::size_t PolicyRunner::observation_size() const { return static_cast<std::size_t>(impl_->policy->shape().observations); }
std::size_t PolicyRunner::action_size() const { return static_cast<std::size_t>(impl_->policy->shape().actions); }
bool PolicyRunner::discrete() const { return impl_->policy->discrete(); }
const configs::RlSpec& PolicyRunner::trained_spec() const { return impl_->spec; }

void PolicyRunner::act(std::span<const float> obs, std::span<float> action) {
  MESHSIM_CHECK(obs.size() == observation_size() && action.size() == action_size(),
                "PolicyRunner::act: observation or action size differs from the policy's");
  if (impl_->normalizer) {
    impl_->normalizer->normalize(obs, impl_->normalized);
  } else {
    std::copy(obs.begin(), obs.end(), impl_->normalized.begin());
  }
  const torch::NoGradGuard no_grad;
  const auto input = torch::from_blob(impl_->normalized.data(), {1, static_cast<std::int64_t>(obs.size())}, torch::kFloat);
  torch::Tensor out = impl_->policy->actor_output(input);
  if (discrete()) out = out.argmax(-1).to(torch::kFloat);  // [1, A]
  const auto values = out.contiguous();
  std::copy_n(values.data_ptr<float>(), action.size(), action.begin());
}

}  // namespace meshsim::rl
