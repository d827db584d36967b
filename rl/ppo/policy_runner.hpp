#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "configs/rl_config.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::rl {

// A trained policy read from a checkpoint folder (`meshsim train`'s out/checkpoint),
// acting deterministically for evaluation: the Gaussian's mean (the environment clips it
// to [-1, 1]) or each categorical's most likely choice, on observations normalised with
// the statistics frozen at the checkpoint. LibTorch stays behind this header.
class PolicyRunner {
 public:
  static Expected<std::unique_ptr<PolicyRunner>> load(const std::filesystem::path& checkpoint);
  ~PolicyRunner();

  std::size_t observation_size() const;
  std::size_t action_size() const;
  bool discrete() const;
  // The rl spec the policy was trained with: its actions mean what this spec's action
  // kind, steps and decision interval say, whatever scenario it is evaluated on.
  const configs::RlSpec& trained_spec() const;
  // The rl specs of the other recipes it trained on (rl.train_also), in order.
  const std::vector<configs::RlSpec>& train_also_specs() const;
  // `obs`: one raw observation; writes one action.
  void act(std::span<const float> obs, std::span<float> action);

 private:
  struct Impl;
  explicit PolicyRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshsim::rl
