// `meshsim eval`: every baseline of the autoscaler interface and a trained policy on one
// window of a trace, through the same environment and reward; any trace the readers
// accept; a policy that does not fit the scenario refused with the sizes.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "configs/scenario_config.hpp"
#include "tests/shared_data.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/eval_command.hpp"
#include "tools/cli/train_command.hpp"

namespace meshsim::cli {
namespace {

using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::CommandRun;
using testing::run_command;
using testing::csv_rows;
using testing::slurp;

TEST(EvalCommandTest, RunsEveryBaselineAndATrainedPolicyOnTheSameWindow) {
  // A policy trained briefly on the default recipe (2 iterations).
  TrainCommandOptions train;
  train.out_dir = fresh_dir("eval_policy").string();
  train.total_decisions = 2048;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);

  EvalCommandOptions options;
  options.policy = train.out_dir + "/checkpoint";
  options.out_dir = fresh_dir("eval_default").string();
  options.window_start_s = 3600;
  options.window_s = 900;
  options.delays_s = {10, 60};
  options.max_static = 6;
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("scale-up delay 60 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gap closed:"), std::string::npos) << r.out;
  const auto all = csv_rows(slurp(options.out_dir + "/eval.csv"));
  // Per delay: 6 static sizes, elastic, 5 + 5 target-tracking targets, the oracle, ppo.
  ASSERT_EQ(all.size(), 2u * (6 + 1 + 5 + 5 + 1 + 1));
  int in_table = 0;
  for (const auto& row : all) {
    in_table += row.at("in_table") == "1";
    const double slo = std::stod(row.at("slo_attainment"));
    EXPECT_GE(slo, 0.0);
    EXPECT_LE(slo, 1.0);
    EXPECT_GT(std::stod(row.at("gpu_hours")), 0.0) << row.at("policy");
    // A static size never scales.
    if (row.at("policy") == "static") {
      EXPECT_EQ(row.at("scale_ups"), "0");
    }
  }
  EXPECT_EQ(in_table, 2 * 5);  // ppo, best static, elastic, best target tracking, oracle
  // The verdict names the cheapest baseline (not the oracle) at ppo's SLO attainment or better.
  for (const std::string delay : {"10", "60"}) {
    double ppo_slo = -1, ppo_gpu = 0, cheapest = 1e300;
    for (const auto& row : all) {
      if (row.at("delay_s") == delay && row.at("policy") == "ppo") {
        ppo_slo = std::stod(row.at("slo_attainment"));
        ppo_gpu = std::stod(row.at("gpu_hours"));
      }
    }
    for (const auto& row : all) {
      if (row.at("delay_s") != delay || row.at("policy") == "ppo" || row.at("policy") == "oracle") continue;
      if (std::stod(row.at("slo_attainment")) >= ppo_slo) cheapest = std::min(cheapest, std::stod(row.at("gpu_hours")));
    }
    char expected[160];
    if (cheapest == 1e300) {  // the policy beats every baseline's SLO attainment
      EXPECT_NE(r.out.find("vs baselines: none reaches ppo's SLO attainment"), std::string::npos) << r.out;
      continue;
    }
    std::snprintf(expected, sizeof expected, "%.2f GPU-h, ", cheapest);
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in " << r.out;
    std::snprintf(expected, sizeof expected, "ppo uses %.1f%% %s GPU-hours", 100.0 * std::abs(1.0 - ppo_gpu / cheapest),
                  ppo_gpu <= cheapest ? "fewer" : "more");
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " in " << r.out;
  }
  // Every adaptive policy starts the window at the best static size (highest reward), so
  // none pays the scale-up delay for a start the static baseline never had.
  for (const std::string delay : {"10", "60"}) {
    double best_reward = -1e300;
    std::string best_size;
    for (const auto& row : all) {
      if (row.at("delay_s") != delay || row.at("policy") != "static") continue;
      EXPECT_EQ(row.at("start_instances"), row.at("parameter"));
      if (std::stod(row.at("reward")) > best_reward) {
        best_reward = std::stod(row.at("reward"));
        best_size = row.at("parameter");
      }
    }
    for (const auto& row : all) {
      if (row.at("delay_s") == delay && row.at("policy") != "static") {
        EXPECT_EQ(row.at("start_instances"), best_size) << row.at("policy");
      }
    }
    EXPECT_NE(r.out.find("scale-up delay " + delay + " s; the adaptive policies start with " + best_size), std::string::npos)
        << r.out;
  }
  // Static GPU-hours are the size's: k instances x 4 GPUs x 0.25 h.
  for (const auto& row : all) {
    if (row.at("policy") == "static" && row.at("delay_s") == "10") {
      EXPECT_NEAR(std::stod(row.at("gpu_hours")), std::stod(row.at("parameter")) * 4 * 0.25, 1e-6);
    }
  }
  // The same options give the same file.
  EvalCommandOptions again = options;
  again.out_dir = fresh_dir("eval_default_again").string();
  ASSERT_EQ(run_command(again, run_eval_command).code, kExitOk);
  EXPECT_EQ(slurp(again.out_dir + "/eval.csv"), slurp(options.out_dir + "/eval.csv"));
  EXPECT_EQ(slurp(again.out_dir + "/instances.csv"), slurp(options.out_dir + "/instances.csv"));
}

TEST(EvalCommandTest, StartInstancesSetsWhereTheAdaptivePoliciesStart) {
  EvalCommandOptions options;
  options.out_dir = fresh_dir("eval_start").string();
  options.window_start_s = 3600;
  options.window_s = 600;
  options.max_static = 3;
  options.kv_targets = {0.7};
  options.request_targets = {};
  options.start_instances = 2;
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const auto& row : csv_rows(slurp(options.out_dir + "/eval.csv"))) {
    EXPECT_EQ(row.at("start_instances"), row.at("policy") == "static" ? row.at("parameter") : "2") << row.at("policy");
  }
  options.start_instances = 4;  // beyond the static sizes swept
  const CommandRun refused = run_command(options, run_eval_command);
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_NE(refused.err.find("--start-instances: expected an integer in [1, 3]"), std::string::npos) << refused.err;
}

TEST(EvalCommandTest, StaticSizesNeverScaleWhateverTheConfigsAutoscaler) {
  std::ifstream in(configs::default_training_path());
  nlohmann::json recipe = nlohmann::json::parse(in);
  recipe["autoscaler"] = {{"policy", "target_tracking"}, {"target_tracking", {{"target", 4}}}};
  EvalCommandOptions options;
  options.config_path = scenario_in_fresh_dir("eval_autoscaled", "recipe.json", recipe.dump()).string();
  options.out_dir = fresh_dir("eval_autoscaled_out").string();
  options.window_start_s = 3600;
  options.window_s = 600;
  options.max_static = 3;
  options.kv_targets = {};
  options.request_targets = {8};
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const auto& row : csv_rows(slurp(options.out_dir + "/eval.csv"))) {
    if (row.at("policy") != "static") continue;
    EXPECT_EQ(row.at("scale_ups"), "0") << "static " << row.at("parameter");
    EXPECT_EQ(row.at("scale_downs"), "0") << "static " << row.at("parameter");
    EXPECT_NEAR(std::stod(row.at("gpu_hours")), std::stod(row.at("parameter")) * 4 * 600 / 3600, 1e-6);
  }
}

TEST(EvalCommandTest, RunsOnRealTracesItNeverSaw) {
  for (const char* file : {"traces/azure2023_conv.csv", "traces/mooncake_fast25_conversation.jsonl"}) {
    const std::string trace = meshsim::testing::shared_path(file);
    MESHSIM_NEED_SHARED_FILE(trace);
    EvalCommandOptions options;
    options.trace = trace;
    options.out_dir = fresh_dir("eval_real").string();
    options.window_s = 600;
    options.max_static = 4;
    options.kv_targets = {0.7};
    options.request_targets = {16};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << file << ": " << r.err;
    EXPECT_EQ(csv_rows(slurp(options.out_dir + "/eval.csv")).size(), 4u + 1 + 1 + 1 + 1) << file;
  }
}

TEST(EvalCommandTest, APolicyActsAsItWasTrainedWhateverTheEvaluatedScenarioSays) {
  // A discrete policy, deciding every 30 s, priced by its own reward weights.
  std::ifstream in(configs::default_training_path());
  nlohmann::json recipe = nlohmann::json::parse(in);
  recipe["rl"]["action"] = "discrete";
  recipe["rl"]["discrete_max_step"] = 1;
  recipe["rl"]["decision_interval_s"] = 30;
  recipe["rl"]["reward"]["churn_weight"] = 0.05;
  recipe["rl"]["ppo"]["num_envs"] = 4;
  recipe["rl"]["ppo"]["rollout_steps"] = 32;
  TrainCommandOptions train;
  train.config_path = scenario_in_fresh_dir("eval_trained_as", "recipe.json", recipe.dump()).string();
  train.out_dir = fresh_dir("eval_trained_as_run").string();
  train.total_decisions = 256;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);

  // Evaluated on the recipe, and on the same scenario without an rl object (continuous
  // actions, 15 s, other weights by default): eval.csv must be the same.
  nlohmann::json bare = recipe;
  bare.erase("rl");
  std::vector<std::string> csvs;
  for (const auto& [name, tree] : {std::pair{"recipe", recipe}, std::pair{"bare", bare}}) {
    EvalCommandOptions options;
    options.config_path = scenario_in_fresh_dir(std::string("eval_trained_as_") + name, "s.json", tree.dump()).string();
    options.policy = train.out_dir + "/checkpoint";
    options.out_dir = fresh_dir(std::string("eval_trained_as_out_") + name).string();
    options.window_start_s = 3600;
    options.window_s = 600;
    options.max_static = 2;
    options.kv_targets = {0.7};
    options.request_targets = {16};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << name << ": " << r.err;
    csvs.push_back(slurp(options.out_dir + "/eval.csv"));
  }
  EXPECT_EQ(csvs[0], csvs[1]);
}

TEST(EvalCommandTest, ARateScalePlaysTheWindowFaster) {
  std::map<double, double> tracked_instances;
  for (const double scale : {1.0, 3.0}) {
    EvalCommandOptions options;
    options.config_path = configs::default_scenario_path();  // 5.5 requests/s: 3x stays under the cap
    options.out_dir = fresh_dir("eval_rate_scale").string();
    options.window_start_s = 600;
    options.window_s = 600;
    options.rate_scale = scale;
    options.max_static = 2;
    options.kv_targets = {};
    options.request_targets = {8};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << r.err;
    if (scale == 3.0) {
      EXPECT_NE(r.out.find("window [600, 2400) s of the workload at 3x its rate (600 s)"), std::string::npos) << r.out;
    }
    for (const auto& row : csv_rows(slurp(options.out_dir + "/eval.csv"))) {
      if (row.at("policy") == "static") {  // simulated time is the window's length at any rate
        EXPECT_NEAR(std::stod(row.at("gpu_hours")), std::stod(row.at("parameter")) * 4 * 600 / 3600, 1e-6);
      }
      if (row.at("policy") == "target_tracking_requests") tracked_instances[scale] = std::stod(row.at("mean_instances"));
    }
  }
  EXPECT_GT(tracked_instances[3.0], 1.5 * tracked_instances[1.0]);
}

TEST(EvalCommandTest, APolicyForAnotherScenarioOrAWindowOutsideTheTraceIsRefused) {
  TrainCommandOptions train;
  train.out_dir = fresh_dir("eval_policy_mixed").string();
  train.total_decisions = 1024;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);
  // The same recipe with split prompt and token pools: two pools and the migration entry.
  std::ifstream in(configs::default_training_path());
  nlohmann::json split = nlohmann::json::parse(in);
  split["serving"]["start_state"] = {{{"tag", "prompt"}, {"count", 2}}, {{"tag", "token"}, {"count", 2}}};
  EvalCommandOptions options;
  options.config_path = scenario_in_fresh_dir("eval_split", "split.json", split.dump()).string();
  options.policy = train.out_dir + "/checkpoint";
  options.out_dir = fresh_dir("eval_split_out").string();
  options.window_s = 300;
  options.max_static = 2;
  CommandRun r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("the policy was trained for 25 features and 1 action entries; this scenario has 34 and 3"),
            std::string::npos)
      << r.err;

  EvalCommandOptions outside;
  outside.out_dir = fresh_dir("eval_outside").string();
  outside.window_start_s = 1e6;
  r = run_command(outside, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("must hold at least one decision interval"), std::string::npos) << r.err;
  outside.window_start_s = 0;
  outside.policy = "/nonexistent";
  r = run_command(outside, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("/nonexistent/state.json: cannot read"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace meshsim::cli
