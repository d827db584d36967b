// A checkpoint's state.json: what save writes, load reads back; a damaged or hand-edited
// one is refused naming its key, and no value is ever read as another (no unsigned wrap).
#include "rl/ppo/checkpoint_state.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace meshsim::rl {
namespace {

using nlohmann::json;

CheckpointState sample_state() {
  CheckpointState s;
  s.seed = 7;
  s.iterations = 4;
  s.iteration = 2;
  s.decisions = 48;
  s.policy = PolicyShape{5, 2, 0, {8, 8}};
  s.observation_stats = RunningMeanStd({0.5, -1, 2, 3, 4}, {1, 2, 0.25, 0, 9}, 97.0001);
  s.reward_returns = {0.1, -2.5, 3};
  s.reward_stats = RunningMeanStd({0.3}, {1.7}, 48.0001);
  s.shuffle_rng = {1, 2, 3, 0xFFFFFFFFFFFFFFFFULL};
  for (std::uint64_t i = 0; i < 3; ++i) {
    CheckpointEnv env;
    env.cursor.rng_before_reset = {i + 1, 5, 6, 7};
    env.cursor.actions = {0.25f, -1.0f, 0.5f, std::numeric_limits<float>::quiet_NaN()};
    env.cursor.options.rate_scale = 1.5;
    env.cursor.options.start_instances = 3;
    env.action_rng = {9, 8, 7, i};
    env.episode_return = -0.5 * static_cast<double>(i);
    s.envs.push_back(env);
  }
  return s;
}

Expected<CheckpointState> parse(const json& document) { return parse_checkpoint_state(document.dump(), "state.json"); }

TEST(CheckpointStateTest, ReadsBackWhatItWrites) {
  const json written = to_json(sample_state());
  const auto read = parse(written);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(to_json(*read).dump(), written.dump());
  EXPECT_TRUE(std::isnan(read->envs[2].cursor.actions[3]));  // a diverged policy's action, written as null
  EXPECT_EQ(read->envs[1].cursor.options.start_instances, 3u);
  EXPECT_FALSE(written.contains("train_also_rl"));  // absent unless trained on several recipes

  CheckpointState mixed = sample_state();
  mixed.train_also_rl.resize(2);
  mixed.train_also_rl[1].slo_target = 0.95;
  const auto read_mixed = parse(to_json(mixed));
  ASSERT_TRUE(read_mixed) << read_mixed.error().message;
  ASSERT_EQ(read_mixed->train_also_rl.size(), 2u);
  EXPECT_EQ(read_mixed->train_also_rl[1].slo_target, 0.95);
}

TEST(CheckpointStateTest, HandEditedValuesAreRefusedNamingTheirKey) {
  const json good = to_json(sample_state());
  const auto refused = [&](const std::function<void(json&)>& edit, const std::string& expected) {
    json bad = good;
    edit(bad);
    const auto read = parse(bad);
    ASSERT_FALSE(read) << bad.dump();
    EXPECT_NE(read.error().message.find(expected), std::string::npos) << read.error().message;
  };
  refused([](json& j) { j["iteration"] = -1; }, "state.json: iteration: expected an integer in [0, 4], got -1");
  refused([](json& j) { j["iteration"] = 1000000000000000000; }, "iteration: expected an integer in [0, 4]");
  refused([](json& j) { j["iterations"] = 4294967296; }, "iterations: expected an integer in [1, 4294967295]");
  refused([](json& j) { j["decisions"] = -3; }, "decisions: expected an integer");
  refused([](json& j) { j["observation_stats"]["mean"] = {1, 2, 3}; },
          "observation_stats.mean: expected a list of 5 items");
  refused([](json& j) { j["observation_stats"]["var"][1] = -1; }, "observation_stats.var[1]: expected a number in [0,");
  refused([](json& j) { j["reward_scaler"]["returns"] = {1}; }, "reward_scaler.returns: expected a list of 3 items");
  refused([](json& j) { j["shuffle_rng"] = {0, 0, 0, 0}; }, "shuffle_rng: expected a generator's state");
  refused([](json& j) { j["envs"][1]["options"]["start_instances"] = 0; }, "envs[1].options.start_instances");
  refused([](json& j) { j["envs"][1]["options"]["speed"] = 2; }, "envs[1].options.speed: unknown key");
  refused([](json& j) { j["envs"][0]["actions"][0] = "up"; }, "envs[0].actions[0]: expected a number");
  refused([](json& j) { j["policy"]["hidden"] = json::array(); }, "policy.hidden: expected a list of 1 to 16 items");
  refused([](json& j) { j.erase("shuffle_rng"); }, "shuffle_rng: missing");
  refused([](json& j) { j["format"] = 2; }, "format: checkpoint format 2, this build reads");
  refused([](json& j) { j["rl"]["action"] = "sideways"; }, "rl");
  refused([](json& j) { j["train_also_rl"] = json::array({{{"action", "sideways"}}}); }, "train_also_rl[0]");
  refused([](json& j) { j["train_also_rl"] = json::array(); }, "train_also_rl: expected a list of 1 to 1024 items");
  EXPECT_NE(parse_checkpoint_state("{\"format\": 3, \"se", "state.json").error().message.find("state.json: not JSON"),
            std::string::npos);
}

// Every value outside rl (the config reader's own) replaced by each of a set of wrong ones:
// refused naming its key, or read as exactly that value (never wrapped or rounded).
TEST(CheckpointStateTest, AnyValueIsReadAsItselfOrRefusedNamingItsKey) {
  const json good = to_json(sample_state());
  std::vector<std::pair<json::json_pointer, std::string>> leaves;  // pointer, key path
  std::function<void(const json&, const json::json_pointer&, const std::string&)> walk =
      [&](const json& node, const json::json_pointer& at, const std::string& path) {
        if (node.is_object()) {
          for (const auto& [key, value] : node.items()) {
            if (path.empty() && key == "rl") continue;
            walk(value, at / key, path.empty() ? key : path + "." + key);
          }
        } else if (node.is_array()) {
          for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], at / i, path + "[" + std::to_string(i) + "]");
        } else {
          leaves.emplace_back(at, path);
        }
      };
  walk(good, json::json_pointer(), "");
  ASSERT_GT(leaves.size(), 60u);
  const std::vector<json> replacements = {-1, 1e19, 0.5, "x", true, nullptr, 4294967296ULL, -1e300, 0};
  for (const auto& [pointer, path] : leaves) {
    for (const json& replacement : replacements) {
      json edited = good;
      edited[pointer] = replacement;
      const auto read = parse(edited);
      if (!read) {
        const std::string top = path.substr(0, path.find_first_of(".["));
        EXPECT_NE(read.error().message.find("state.json: " + top), std::string::npos)
            << path << " = " << replacement.dump() << ": " << read.error().message;
        continue;
      }
      const json back = to_json(*read)[pointer];
      if (replacement.is_number() && back.is_number()) {
        const double want = replacement.get<double>(), got = back.get<double>();
        EXPECT_LE(std::abs(got - want), 1e-6 * std::abs(want)) << path << " = " << replacement.dump() << " read as " << back;
      } else {
        EXPECT_EQ(back.dump(), replacement.dump()) << path << " = " << replacement.dump() << " read as " << back;
      }
    }
  }
}

}  // namespace
}  // namespace meshsim::rl

namespace meshsim::rl {
namespace {

// The run sample_state() resumes: 3 environments, 24 decisions per iteration.
ResumedRun sample_run(const CheckpointState& s) {
  return ResumedRun{s.seed, s.iterations, s.envs.size(), s.policy, {s.rl}, 24};
}

TEST(CheckpointStateTest, AResumeIsRefusedNamingTheFirstThingTheRunFixesDifferently) {
  const CheckpointState s = sample_state();
  EXPECT_TRUE(check_resumes(s, sample_run(s), "state.json"));
  const auto refused = [&](const std::function<void(ResumedRun&, CheckpointState&)>& change) {
    CheckpointState state = s;
    ResumedRun run = sample_run(s);
    change(run, state);
    const Status resumes = check_resumes(state, run, "state.json");
    return resumes ? std::string() : resumes.error().message;
  };
  EXPECT_NE(refused([](ResumedRun& r, CheckpointState&) { r.seed = 8; }).find("state.json: seed: the checkpoint has 7"),
            std::string::npos);
  EXPECT_NE(refused([](ResumedRun& r, CheckpointState&) { r.envs = 4; }).find("envs: the checkpoint has 3 environments"),
            std::string::npos);
  EXPECT_NE(refused([](ResumedRun& r, CheckpointState&) { r.policy.hidden = {16}; }).find("policy:"), std::string::npos);
  EXPECT_NE(refused([](ResumedRun& r, CheckpointState&) { r.specs.front().slo_target = 0.5; }).find("rl.slo_target"),
            std::string::npos);
  EXPECT_EQ(refused([](ResumedRun& r, CheckpointState&) { r.specs.front().ppo.threads = 9; }), "")
      << "the threads change the speed alone";
  EXPECT_NE(refused([](ResumedRun& r, CheckpointState&) { r.specs.push_back(r.specs.front()); }).find("train_also_rl"),
            std::string::npos);
  EXPECT_NE(refused([](ResumedRun&, CheckpointState& c) { c.decisions = 47; })
                .find("decisions: expected 48 after 2 iterations, got 47"),
            std::string::npos);
}

}  // namespace
}  // namespace meshsim::rl
