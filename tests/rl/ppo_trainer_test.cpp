#include "rl/ppo/trainer.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/rl/env_fixture.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;

// A small run: 4 environments x 16 decisions per iteration, 2 epochs of 4 minibatches,
// episodes of 8 decisions (so truncations and autoresets happen within a rollout).
Fixture small_fixture(configs::ActionKind action = configs::ActionKind::kContinuous, unsigned threads = 1) {
  Fixture f = make_fixture(/*episode_s=*/120, /*interval_s=*/15);
  configs::PpoSpec& ppo = f.config.rl->ppo;
  ppo.num_envs = 4;
  ppo.rollout_steps = 16;
  ppo.total_decisions = 4 * 16 * 4;
  ppo.minibatches = 4;
  ppo.update_epochs = 2;
  ppo.threads = threads;
  f.config.rl->action = action;
  return f;
}

// The deterministic columns of a learning curve.
std::vector<double> curve(const IterationStats& s) {
  return {static_cast<double>(s.iteration), static_cast<double>(s.decisions), s.learning_rate, s.mean_reward,
          static_cast<double>(s.episodes), s.mean_episode_return, s.slo_attainment, s.mean_instances,
          s.scaling_actions, s.policy_loss, s.value_loss, s.entropy, s.approx_kl, s.clip_fraction,
          s.explained_variance};
}

std::vector<std::vector<double>> train(const Fixture& f, std::uint64_t seed, std::uint32_t iterations) {
  auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.trace, seed));
  std::vector<std::vector<double>> rows;
  for (std::uint32_t i = 0; i < iterations; ++i) rows.push_back(curve(trainer->iterate()));
  return rows;
}

TEST(PpoTrainerTest, TheLearningCurveDoesNotDependOnTheNumberOfThreads) {
  const auto one = train(small_fixture(configs::ActionKind::kContinuous, 1), 7, 3);
  const auto two = train(small_fixture(configs::ActionKind::kContinuous, 2), 7, 3);
  EXPECT_EQ(one, two);
  EXPECT_GT(one[1][4], 0.0);  // episodes ended within the rollouts
  EXPECT_NE(one, train(small_fixture(configs::ActionKind::kContinuous, 1), 8, 3));  // the seed matters
}

TEST(PpoTrainerTest, ResumingFromACheckpointEqualsAnUninterruptedRun) {
  for (const auto action : {configs::ActionKind::kContinuous, configs::ActionKind::kDiscrete}) {
    const Fixture f = small_fixture(action, 2);
    const auto whole = train(f, 11, 4);
    const fs::path dir = fs::path(testing::TempDir()) / "ppo-resume-checkpoint";
    {
      auto first = std::move(*PpoTrainer::create(f.config, catalog(), f.trace, 11));
      first->iterate();
      first->iterate();
      first->save(dir);
    }
    auto resumed = std::move(*PpoTrainer::create(f.config, catalog(), f.trace, 11));
    const Status loaded = resumed->load(dir);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(resumed->iteration(), 2u);
    EXPECT_EQ(curve(resumed->iterate()), whole[2]);
    EXPECT_EQ(curve(resumed->iterate()), whole[3]);
    EXPECT_TRUE(resumed->done());
  }
}

TEST(PpoTrainerTest, ACheckpointOfAnotherRunIsRefusedWithTheReason) {
  const Fixture f = small_fixture();
  const fs::path dir = fs::path(testing::TempDir()) / "ppo-other-checkpoint";
  std::move(*PpoTrainer::create(f.config, catalog(), f.trace, 1))->save(dir);
  auto other = std::move(*PpoTrainer::create(f.config, catalog(), f.trace, 2));
  const Status loaded = other->load(dir);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("another seed"), std::string::npos) << loaded.error().message;
  const Status missing = other->load(dir / "nothing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::rl
