// Feeds arbitrary reset options and actions to a scaling environment, as Python's
// VectorEnv passes them: options that check() refuses are never used; every accepted reset
// (up to 4x the load and 32 instances a group, to keep inputs quick) and every action (NaN,
// huge, negative) steps to the episode's end, never a crash or an internal check.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "rl/env/scaling_env.hpp"

namespace {

using namespace meshsim;

// The training recipe with short episodes, built once.
rl::ScalingEnv& environment() {
  static std::unique_ptr<rl::ScalingEnv> env = []() -> std::unique_ptr<rl::ScalingEnv> {
    auto config = configs::load_scenario_with(configs::default_training_path(),
                                              {{"rl.episode_s", 120}, {"rl.windows_to_s", 3600}});
    if (!config) std::abort();
    static auto catalog = configs::load_scenario_catalog(*config);
    auto workload = traces::open_episode_workload(config->workload, config->seed);
    if (!catalog || !workload) std::abort();
    auto made = rl::ScalingEnv::create(*config, *catalog, *workload);
    if (!made) std::abort();
    return std::move(*made);
  }();
  return *env;
}

// Bytes as values, in order; zeros once they run out.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  template <typename T>
  T value() {
    T out{};
    std::uint8_t raw[sizeof(T)] = {};
    for (auto& b : raw) b = byte();
    std::memcpy(&out, raw, sizeof(T));
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  rl::ScalingEnv& env = environment();
  Bytes in(data, size);
  rl::ResetOptions options;
  const std::uint8_t present = in.byte();
  if (present & 1) options.window_start_s = in.value<double>();
  if (present & 2) options.rate_scale = in.value<double>();
  if (present & 4) options.scale_up_delay_s = in.value<double>();
  if (present & 8) options.start_instances = in.value<std::uint32_t>();
  if (!env.check(options)) return 0;
  // Load and size the serving model's own fuzz target stresses: here, short inputs.
  if (options.rate_scale.value_or(1) > 4 || options.start_instances.value_or(1) > 32) return 0;
  std::vector<float> obs(env.observation_size()), action(env.action_size());
  env.reset(in.value<std::uint64_t>(), obs, options);
  for (std::uint32_t step = 0; step < env.steps_per_episode(); ++step) {
    for (float& a : action) a = in.value<float>();
    env.step(action, obs);
  }
  return 0;
}
