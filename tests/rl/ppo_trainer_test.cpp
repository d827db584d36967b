#include "rl/ppo/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "rl/ppo/policy_runner.hpp"
#include "tests/json_mutation.hpp"
#include "tests/rl/env_fixture.hpp"
#include "tests/rl/ranks_on_threads.hpp"

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
  auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, seed));
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
  for (const auto action : {configs::ActionKind::kContinuous, configs::ActionKind::kDiscrete,
                            configs::ActionKind::kTarget}) {
    const Fixture f = small_fixture(action, 2);
    const auto whole = train(f, 11, 4);
    const fs::path dir = fs::path(testing::TempDir()) / "ppo-resume-checkpoint";
    {
      auto first = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 11));
      first->iterate();
      first->iterate();
      EXPECT_TRUE(first->save(dir));
    }
    auto resumed = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 11));
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
  ASSERT_TRUE(std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 1))->save(dir));
  auto other = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 2));
  const Status loaded = other->load(dir);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("state.json: seed: the checkpoint has 1, this run 2"), std::string::npos)
      << loaded.error().message;
  const Status missing = other->load(dir / "nothing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
}

TEST(PpoTrainerTest, ACheckpointWhoseEpisodesCouldNotHaveHappenedIsRefusedAndChangesNothing) {
  Fixture f = small_fixture(configs::ActionKind::kDiscrete);
  f.config.rl->ppo.rollout_steps = 12;  // saved mid-episode (episodes are 8 decisions)
  f.config.rl->ppo.total_decisions = 4 * 12 * 4;
  const fs::path dir = fs::path(testing::TempDir()) / "ppo-mutated-checkpoint";
  {
    auto first = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 5));
    first->iterate();
    ASSERT_TRUE(first->save(dir));
  }
  const fs::path state_file = dir / "state.json";
  const nlohmann::json saved = nlohmann::json::parse(std::ifstream(state_file));
  ASSERT_FALSE(saved["envs"][0]["actions"].empty());
  const auto mutated = [&](const std::string& pointer, const nlohmann::json& value, const std::string& expected) {
    nlohmann::json state = saved;
    state[nlohmann::json::json_pointer(pointer)] = value;
    std::ofstream(state_file) << state.dump();
    auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 5));
    const Status loaded = trainer->load(dir);
    ASSERT_FALSE(loaded) << pointer;
    EXPECT_NE(loaded.error().message.find(expected), std::string::npos) << loaded.error().message;
    // Nothing was replaced: the trainer runs as a fresh one.
    EXPECT_EQ(trainer->iteration(), 0u);
  };
  mutated("/envs/0/actions/0", 1e6, "envs[0]: actions[0...]: expected a choice in [0, ");
  mutated("/envs/0/actions/0", -3, "envs[0]: actions[0...]: expected a choice in [0, ");
  mutated("/envs/1/options/window_start_s", 1e11, "envs[1].options: expected {}");
  std::ofstream(state_file) << saved.dump();
  auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 5));
  EXPECT_TRUE(trainer->load(dir));

  // Random edits of the whole state file: each is refused (nothing replaced), or loads into
  // a trainer that runs on; none throws.
  std::mt19937_64 rng(47);
  int refused = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const nlohmann::json state = meshsim::mutation::mutated(saved, rng);
    std::ofstream(state_file) << state.dump();
    auto edited = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 5));
    Status loaded = Error{""};
    ASSERT_NO_THROW(loaded = edited->load(dir)) << state.dump();
    if (!loaded) {
      ++refused;
      EXPECT_EQ(edited->iteration(), 0u) << loaded.error().message;
      continue;
    }
    ASSERT_NO_THROW(edited->iterate()) << state.dump();
  }
  EXPECT_GT(refused, 60);
}

// The columns of two learning curves agree to float summation order (relative 1e-4).
void expect_curves_close(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    for (std::size_t c = 0; c < got[i].size(); ++c) {
      EXPECT_NEAR(got[i][c], want[i][c], 1e-4 * std::max(1.0, std::abs(want[i][c]))) << "iteration " << i + 1 << " column " << c;
    }
  }
}

TEST(PpoTrainerTest, TwoRanksFollowOneProcessSteppingTheSameEnvironments) {
  for (const auto action : {configs::ActionKind::kContinuous, configs::ActionKind::kDiscrete}) {
    const Fixture f = small_fixture(action, 1);  // 4 environments: 2 per rank
    const auto one = train(f, 5, 3);
    std::vector<std::vector<std::vector<double>>> curves(2);
    std::vector<std::vector<float>> weights(2);
    on_ranks(2, "ppo-two-ranks", [&](int rank, const std::shared_ptr<RankGroup>& group) {
      auto trainer = PpoTrainer::create(f.config, catalog(), f.workload, 5, group);
      ASSERT_TRUE(trainer) << trainer.error().message;
      EXPECT_EQ((*trainer)->envs().num_envs(), 2u);
      EXPECT_EQ((*trainer)->iterations(), 4u);  // the same run: 4 x 16 decisions per iteration
      for (int i = 0; i < 3; ++i) curves[static_cast<std::size_t>(rank)].push_back(curve((*trainer)->iterate()));
      weights[static_cast<std::size_t>(rank)] = (*trainer)->weights();
    });
    EXPECT_EQ(curves[0], curves[1]);    // every figure is over all ranks
    EXPECT_EQ(weights[0], weights[1]);  // bit for bit
    expect_curves_close(curves[0], one);
    EXPECT_GT(one[1][4], 0.0);  // episodes ended (truncation bootstraps were exercised)
  }
}

// A mix of scenarios splits over ranks by each environment's index in the whole run:
// three members over 2 ranks x 2 environments (rank 1 holds members 2 and 0), and the
// run follows the one-process run over the same mix. A mix differs from its first member.
TEST(PpoTrainerTest, AMixOfScenariosTrainsOnTwoRanksAsInOneProcess) {
  const Fixture f = small_fixture();
  std::vector<EnvMember> mix(3, EnvMember{f.config, f.workload});
  mix[1].config.rl->rate_scales = {2.0};
  mix[2].config.rl->rate_scales = {0.5};
  const auto train_mix = [&](std::span<const EnvMember> members) {
    auto trainer = std::move(*PpoTrainer::create(members, catalog(), 5));
    std::vector<std::vector<double>> rows;
    for (int i = 0; i < 3; ++i) rows.push_back(curve(trainer->iterate()));
    return rows;
  };
  const auto one = train_mix(mix);
  EXPECT_NE(one, train_mix(std::span(mix).first(1)));
  std::vector<std::vector<std::vector<double>>> curves(2);
  on_ranks(2, "ppo-two-ranks-mix", [&](int rank, const std::shared_ptr<RankGroup>& group) {
    auto trainer = PpoTrainer::create(mix, catalog(), 5, group);
    ASSERT_TRUE(trainer) << trainer.error().message;
    for (int i = 0; i < 3; ++i) curves[static_cast<std::size_t>(rank)].push_back(curve((*trainer)->iterate()));
  });
  EXPECT_EQ(curves[0], curves[1]);
  expect_curves_close(curves[0], one);
}

// Evaluation plays policies on several threads at once: runners of one checkpoint act
// alike, whether alone or side by side, and deterministically.
TEST(PolicyRunnerTest, RunnersActAlikeOnThreadsAtOnce) {
  for (const auto kind : {configs::ActionKind::kContinuous, configs::ActionKind::kTarget}) {
    const Fixture f = small_fixture(kind);
    const fs::path dir = fs::path(testing::TempDir()) / "ppo-runner-checkpoint";
    {
      auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 3));
      trainer->iterate();
      EXPECT_TRUE(trainer->save(dir));
    }
    std::vector<std::unique_ptr<PolicyRunner>> runners;
    for (int i = 0; i < 2; ++i) runners.push_back(std::move(*PolicyRunner::load(dir)));
    const std::size_t obs_size = runners[0]->observation_size(), act_size = runners[0]->action_size();
    engine::Rng rng(9);
    std::vector<std::vector<float>> observations(500, std::vector<float>(obs_size));
    for (auto& obs : observations) {
      for (float& x : obs) x = static_cast<float>(rng.normal() * 3);
    }
    const auto act_all = [&](PolicyRunner& runner) {
      std::vector<float> actions;
      std::vector<float> action(act_size);
      for (const auto& obs : observations) {
        runner.act(obs, action);
        actions.insert(actions.end(), action.begin(), action.end());
      }
      return actions;
    };
    const std::vector<float> alone = act_all(*runners[0]);
    std::vector<std::vector<float>> together(2);
    std::thread other([&] { together[1] = act_all(*runners[1]); });
    together[0] = act_all(*runners[0]);
    other.join();
    EXPECT_EQ(together[0], alone);
    EXPECT_EQ(together[1], alone);
    if (kind == configs::ActionKind::kTarget) {
      for (const float a : alone) EXPECT_EQ(a, std::floor(a)) << "a choice is a whole number";
    }
  }
}

TEST(PpoTrainerTest, ACheckpointOfTwoRanksResumesInOneProcess) {
  const Fixture f = small_fixture();
  const auto one = train(f, 6, 4);
  const fs::path dir = fs::path(testing::TempDir()) / "ppo-two-rank-checkpoint";
  on_ranks(2, "ppo-checkpoint", [&](int, const std::shared_ptr<RankGroup>& group) {
    auto trainer = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 6, group));
    trainer->iterate();
    trainer->iterate();
    EXPECT_TRUE(trainer->save(dir));  // rank 0 writes every rank's environments
  });
  auto resumed = std::move(*PpoTrainer::create(f.config, catalog(), f.workload, 6));
  const Status loaded = resumed->load(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(resumed->iteration(), 2u);
  expect_curves_close({curve(resumed->iterate()), curve(resumed->iterate())}, {one[2], one[3]});
}

TEST(PpoTrainerTest, RanksOfAnotherRunOrAnUnevenSplitAreRefused) {
  const Fixture f = small_fixture();
  std::vector<std::string> errors(2);
  on_ranks(2, "ppo-other-seed", [&](int rank, const std::shared_ptr<RankGroup>& group) {
    auto trainer = PpoTrainer::create(f.config, catalog(), f.workload, 1 + static_cast<std::uint64_t>(rank), group);
    ASSERT_FALSE(trainer);
    errors[static_cast<std::size_t>(rank)] = trainer.error().message;
  });
  EXPECT_EQ(errors[0], errors[1]);  // both ranks stop, with the same reason
  EXPECT_NE(errors[0].find("rank 1 was started with another config, trace or seed"), std::string::npos) << errors[0];
  on_ranks(3, "ppo-uneven", [&](int, const std::shared_ptr<RankGroup>& group) {
    auto trainer = PpoTrainer::create(f.config, catalog(), f.workload, 1, group);
    ASSERT_FALSE(trainer);
    EXPECT_NE(trainer.error().message.find("rl.ppo.num_envs: 4 environments do not split over 3 ranks"),
              std::string::npos);
  });
}

}  // namespace
}  // namespace meshsim::rl
