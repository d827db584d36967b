#include "rl/env/vector_env.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/rl/env_fixture.hpp"

namespace meshsim::rl {
namespace {

// Everything a vector of environments reports over `steps` steps of a fixed action
// sequence (different per environment), flattened for comparison.
struct Trajectory {
  std::vector<float> obs, final_obs;
  std::vector<double> rewards;
  std::vector<std::uint8_t> truncations;
  std::vector<double> gpu_hours;
};

std::vector<float> actions_at(std::size_t step, std::size_t envs) {
  std::vector<float> out;
  for (std::size_t i = 0; i < envs; ++i) out.push_back(std::sin(static_cast<float>(step * 7 + i * 3)) * 0.6f);
  return out;
}

// Steps `vec` from reset(42), recording what every environment returned.
Trajectory record(VectorEnv& vec, std::size_t envs, std::size_t steps) {
  Trajectory t;
  vec.reset(42);
  t.obs.assign(vec.observations().begin(), vec.observations().end());
  for (std::size_t s = 0; s < steps; ++s) {
    vec.step(actions_at(s, envs));
    t.obs.insert(t.obs.end(), vec.observations().begin(), vec.observations().end());
    t.rewards.insert(t.rewards.end(), vec.rewards().begin(), vec.rewards().end());
    t.truncations.insert(t.truncations.end(), vec.truncations().begin(), vec.truncations().end());
    for (std::size_t i = 0; i < envs; ++i) {
      t.gpu_hours.push_back(vec.infos()[i].gpu_hours);
      if (vec.truncations()[i]) {
        const auto row = vec.final_observations().subspan(i * vec.observation_size(), vec.observation_size());
        t.final_obs.insert(t.final_obs.end(), row.begin(), row.end());
      }
    }
  }
  return t;
}

Trajectory play(const Fixture& f, std::size_t envs, unsigned threads, std::size_t steps) {
  auto vec = std::move(*VectorEnv::create(f.config, catalog(), f.workload, {.num_envs = envs, .threads = threads}));
  EXPECT_EQ(vec->threads(), threads);
  return record(*vec, envs, steps);
}

Trajectory play_members(std::span<const EnvMember> members, std::size_t envs, std::size_t steps) {
  auto vec = std::move(*VectorEnv::create(members, catalog(), {.num_envs = envs, .threads = 2}));
  return record(*vec, envs, steps);
}

// A mix of scenarios: environment i plays member i % k exactly as a vector of that member
// alone plays its environment i (same seed + i), so mixing changes no environment's play.
TEST(VectorEnvTest, AMixOfScenariosPlaysEachAsAVectorOfItAloneWould) {
  const auto f = make_fixture(/*episode_s=*/90, /*interval_s=*/15);
  EnvMember a{f.config, f.workload}, b{f.config, f.workload};
  b.config.name = "twice as busy";
  b.config.rl->rate_scales = {2.0};
  const std::vector<EnvMember> mix{a, b};
  constexpr std::size_t kEnvs = 4, kSteps = 12;
  const Trajectory mixed = play_members(mix, kEnvs, kSteps);
  const Trajectory only_a = play_members(std::span(&a, 1), kEnvs, kSteps);
  const Trajectory only_b = play_members(std::span(&b, 1), kEnvs, kSteps);
  const std::size_t obs = mixed.obs.size() / ((kSteps + 1) * kEnvs);
  bool differ = false;
  for (std::size_t row = 0; row < (kSteps + 1) * kEnvs; ++row) {
    const Trajectory& alone = row % kEnvs % 2 == 0 ? only_a : only_b;
    const auto at = [&](const Trajectory& t) {
      return std::vector<float>(t.obs.begin() + static_cast<std::ptrdiff_t>(row * obs),
                                t.obs.begin() + static_cast<std::ptrdiff_t>((row + 1) * obs));
    };
    EXPECT_EQ(at(mixed), at(alone)) << "row " << row;
    differ = differ || at(only_a) != at(only_b);
  }
  for (std::size_t i = 0; i < mixed.rewards.size(); ++i) {
    EXPECT_EQ(mixed.rewards[i], (i % kEnvs % 2 == 0 ? only_a : only_b).rewards[i]) << i;
  }
  EXPECT_TRUE(differ) << "the members must play differently for the test to mean anything";

  // Members that a policy cannot play alike are refused, naming both.
  EnvMember residual = b;
  residual.config.rl->action = configs::ActionKind::kResidual;
  const std::vector<EnvMember> unlike{a, residual};
  const auto refused = VectorEnv::create(unlike, catalog(), {.num_envs = 2});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("twice as busy: its environment observes"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("one policy cannot play both"), std::string::npos);
}

TEST(VectorEnvTest, ResultsDoNotDependOnTheNumberOfThreads) {
  const auto f = make_fixture(/*episode_s=*/90, /*interval_s=*/15);  // 6 steps: autoresets happen
  const Trajectory one = play(f, 5, 1, 20);
  for (const unsigned threads : {2u, 3u}) {
    const Trajectory many = play(f, 5, threads, 20);
    EXPECT_EQ(one.obs, many.obs) << threads << " threads";
    EXPECT_EQ(one.rewards, many.rewards) << threads << " threads";
    EXPECT_EQ(one.truncations, many.truncations) << threads << " threads";
    EXPECT_EQ(one.final_obs, many.final_obs) << threads << " threads";
    EXPECT_EQ(one.gpu_hours, many.gpu_hours) << threads << " threads";
  }
  EXPECT_EQ(one.final_obs.size(), 3u * 5u * (one.obs.size() / (21u * 5u)));  // 3 autoresets per env in 20 steps
}

// Environment i of a vector is exactly a lone environment reset with seed + i, and an
// autoreset is reset() without a seed: a differential test against the single API.
TEST(VectorEnvTest, EachEnvironmentMatchesALoneEnvironmentSeededWithSeedPlusIndex) {
  const auto f = make_fixture(/*episode_s=*/60, /*interval_s=*/15);
  const std::size_t envs = 3, steps = 10;
  const Trajectory vec = play(f, envs, 2, steps);
  for (std::size_t i = 0; i < envs; ++i) {
    auto lone = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
    const std::size_t n = lone->observation_size();
    std::vector<float> obs(n);
    lone->reset(42 + i, obs);
    EXPECT_TRUE(std::equal(obs.begin(), obs.end(), vec.obs.begin() + static_cast<std::ptrdiff_t>(i * n)));
    for (std::size_t s = 0; s < steps; ++s) {
      const float action = actions_at(s, envs)[i];
      const StepResult result = lone->step({&action, 1}, obs);
      ASSERT_EQ(result.reward, vec.rewards[s * envs + i]) << "env " << i << " step " << s;
      ASSERT_EQ(result.truncated, vec.truncations[s * envs + i] != 0);
      if (result.truncated) lone->reset(std::nullopt, obs);
      const auto row = vec.obs.begin() + static_cast<std::ptrdiff_t>(((s + 1) * envs + i) * n);
      ASSERT_TRUE(std::equal(obs.begin(), obs.end(), row)) << "env " << i << " step " << s;
    }
  }
}

TEST(VectorEnvTest, AWrongNumberOfActionsIsAClearError) {
  const auto f = make_fixture(60, 15);
  auto vec = std::move(*VectorEnv::create(f.config, catalog(), f.workload, {.num_envs = 2, .threads = 2}));
  vec->reset(1);
  try {
    vec->step(std::vector<float>(3, 0.0f));
    FAIL() << "expected an error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("expected 2 action values (2 environments x 1), got 3"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(VectorEnv::create(f.config, catalog(), f.workload, {.num_envs = 0}));
}

}  // namespace
}  // namespace meshsim::rl
