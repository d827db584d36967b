// `meshsim eval`: trained policies and every baseline judged by the protocol of
// rl/env/evaluation.hpp: the recipe's test spans by default, windows overlapping training
// refused, baselines tuned on the training windows only, every adaptive policy starting
// from the tuned static size; any trace the readers accept; a policy that does not fit the
// scenario refused with the sizes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "configs/scenario_config.hpp"
#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/outcome_rows.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/eval_command.hpp"
#include "tools/runs/evaluation_report.hpp"
#include "tools/cli/train_command.hpp"

namespace meshsim::cli {
namespace {

using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::CommandRun;
using testing::run_command;
using testing::csv_rows;
using testing::slurp;
using Row = std::map<std::string, std::string>;
namespace fs = std::filesystem;

// The shipped recipe made small: 5-minute episodes trained in [0, 3600 + 450) s, two
// tuning windows, validation [4200, 4500) s and test [4800, 5400) s.
nlohmann::json small_recipe() {
  std::ifstream in(configs::default_training_path());
  nlohmann::json recipe = nlohmann::json::parse(in);
  recipe["rl"]["episode_s"] = 300;
  recipe["rl"]["windows_to_s"] = 3600;
  recipe["rl"]["validation"] = {{4200, 4500}};
  recipe["rl"]["test"] = {{4800, 5400}};
  recipe["rl"]["tuning_windows"] = 2;
  recipe["rl"]["ppo"]["num_envs"] = 4;
  recipe["rl"]["ppo"]["rollout_steps"] = 32;
  return recipe;
}

// Small grids, one target each, so a test's evaluation takes seconds.
EvalCommandOptions small_eval(const std::string& config_path, const std::string& name) {
  EvalCommandOptions options;
  options.config_path = config_path;
  options.out_dir = fresh_dir(name).string();
  options.grids = rl::BaselineGrids{{0.7}, {16}, {2}, {3000}, {32}, {0.5, 0.9}};
  options.grids.multi_metric_scales = {1.0, 2.0};
  options.max_static = 16;
  options.plot = false;
  return options;
}

std::vector<Row> rows_where(const std::vector<Row>& rows, const std::string& key, const std::string& value) {
  std::vector<Row> kept;
  for (const Row& row : rows) {
    if (row.at(key) == value) kept.push_back(row);
  }
  return kept;
}

TEST(EvalCommandTest, JudgesPoliciesOnTheTestSpansAgainstBaselinesTunedOnTraining) {
  const std::string recipe = scenario_in_fresh_dir("eval_recipe", "recipe.json", small_recipe().dump()).string();
  TrainCommandOptions train;
  train.config_path = recipe;
  train.out_dir = fresh_dir("eval_policy").string();
  train.total_decisions = 256;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);

  EvalCommandOptions options = small_eval("", "eval_default");  // the recipe: the run's config.json
  options.policies = {train.out_dir + "/checkpoint"};
  options.delays_s = {10, 60};
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("test 1 [4800, 5400) s, scale-up delay 60 s"), std::string::npos) << r.out;

  const auto tuning = csv_rows(slurp(options.out_dir + "/tuning.csv"));
  const auto all = csv_rows(slurp(options.out_dir + "/eval.csv"));
  const auto verdicts = csv_rows(slurp(options.out_dir + "/verdicts.csv"));
  for (const std::string delay : {"10", "60"}) {
    // The tuned static size: the first reaching 99% over the tuning windows, the sweep
    // stopping there.
    const auto statics = rows_where(rows_where(tuning, "delay_s", delay), "policy", "static");
    ASSERT_FALSE(statics.empty());
    const Row& chosen = statics.back();
    EXPECT_EQ(chosen.at("chosen"), "1");
    EXPECT_GE(std::stod(chosen.at("slo_attainment")), 0.99);
    for (std::size_t k = 0; k + 1 < statics.size(); ++k) EXPECT_LT(std::stod(statics[k].at("slo_attainment")), 0.99);
    // One parameter chosen per adaptive family, each started at the tuned size.
    for (const std::string family : {"elastic", "target_tracking_kv", "target_tracking_requests", "target_tracking_rate",
                                     "target_tracking_tokens"}) {
      const auto tuned = rows_where(rows_where(tuning, "delay_s", delay), "policy", family);
      ASSERT_EQ(tuned.size(), 1u) << family;
      EXPECT_EQ(tuned[0].at("chosen"), "1");
      EXPECT_EQ(tuned[0].at("start_instances"), chosen.at("parameter"));
    }
    const auto here = rows_where(all, "delay_s", delay);
    // Played on the test span only; every adaptive policy and the trained one from the
    // tuned size.
    for (const Row& row : here) {
      EXPECT_EQ(row.at("window"), "test 1");
      EXPECT_EQ(row.at("window_start_s"), "4800");
      if (row.at("role") != "hindsight") {
        EXPECT_EQ(row.at("start_instances"), chosen.at("parameter")) << row.at("policy");
      }
      if (row.at("policy") == "static") {
        EXPECT_EQ(row.at("scale_ups"), "0");
      }
    }
    // Multi-metric target tracking, tuned after them on their tuned targets.
    const auto multi = rows_where(rows_where(tuning, "delay_s", delay), "policy", "target_tracking_multi");
    ASSERT_EQ(multi.size(), 2u);  // the test's grid of scales
    EXPECT_EQ(rows_where(multi, "chosen", "1").size(), 1u);
    const auto tuned_rows = rows_where(here, "role", "tuned");
    ASSERT_EQ(tuned_rows.size(), 7u);  // static, elastic, four target trackings, multi-metric
    EXPECT_EQ(tuned_rows[0].at("parameter"), chosen.at("parameter"));
    ASSERT_EQ(rows_where(here, "role", "policy").size(), 1u);
    // The oracle, a bound, tuned by the same rule on the training windows: the cheapest
    // utilisation reaching the target, else the highest attainment.
    const auto oracle_tuning = rows_where(rows_where(tuning, "delay_s", delay), "policy", "oracle");
    ASSERT_EQ(oracle_tuning.size(), 2u);
    const int oracle_pick = rl::pick(testing::outcomes_of(oracle_tuning), 0.99);
    ASSERT_GE(oracle_pick, 0);
    EXPECT_EQ(oracle_tuning[static_cast<std::size_t>(oracle_pick)].at("chosen"), "1");
    const auto oracle_rows = rows_where(here, "role", "oracle");
    ASSERT_EQ(oracle_rows.size(), 1u);
    EXPECT_EQ(oracle_rows[0].at("parameter"), oracle_tuning[static_cast<std::size_t>(oracle_pick)].at("parameter"));
    // The verdict's rival is the cheapest tuned baseline at the policy's SLO or better.
    const Row& policy = rows_where(here, "role", "policy")[0];
    const double slo = std::stod(policy.at("slo_attainment"));
    std::string rival;
    double cheapest = 1e300;
    for (const Row& row : tuned_rows) {
      const std::string name = row.at("policy") + (row.at("parameter").empty() ? "" : " " + row.at("parameter"));
      if (std::stod(row.at("slo_attainment")) >= slo && std::stod(row.at("gpu_hours")) < cheapest) {
        cheapest = std::stod(row.at("gpu_hours"));
        rival = name;
      }
    }
    const auto verdict = rows_where(verdicts, "delay_s", delay);
    ASSERT_EQ(verdict.size(), 1u);
    if (rival.empty()) {
      EXPECT_EQ(verdict[0].at("rival"), "");
    } else {
      EXPECT_NEAR(std::stod(verdict[0].at("rival_gpu_hours")), cheapest, 1e-5);
      EXPECT_NEAR(std::stod(verdict[0].at("saving_vs_rival")), 1 - std::stod(policy.at("gpu_hours")) / cheapest, 1e-4);
    }
    // The honest verdict: the policy's GPU-hours as a multiple of the cheapest tuned
    // baseline meeting the 99% target, whatever the policy's own SLO.
    double cheapest_meeting = 1e300;
    for (const Row& row : tuned_rows) {
      if (std::stod(row.at("slo_attainment")) >= 0.99) cheapest_meeting = std::min(cheapest_meeting, std::stod(row.at("gpu_hours")));
    }
    if (cheapest_meeting < 1e300) {
      const double ratio = std::stod(policy.at("gpu_hours")) / cheapest_meeting;
      EXPECT_NEAR(std::stod(verdict[0].at("cost_ratio")), ratio, 1e-4);
      EXPECT_NE(r.out.find(ratio > 1 ? "x the cheapest tuned baseline meeting the 99.00% target"
                                     : " GPU-hours than the cheapest tuned baseline meeting the 99.00% target"),
                std::string::npos)
          << r.out;
    } else {
      EXPECT_EQ(verdict[0].at("cost_ratio"), "");
    }
    // Every target tracking parameter played on the window (a front per metric and one
    // for multi-metric's scales), and the right-sizing bound at every utilisation in both
    // forms and at up to `bound_prices` prices of a miss.
    EXPECT_EQ(rows_where(here, "role", "front").size(), 4u + 2u);
    const auto bound = rows_where(here, "role", "bound");
    const std::size_t utilisations = rl::BaselineGrids{}.bound_utilisations.size();
    EXPECT_EQ(rows_where(bound, "policy", "bound_hindsight").size(), utilisations);
    EXPECT_EQ(rows_where(bound, "policy", "bound_smoothed").size(), utilisations);
    const auto priced = rows_where(bound, "policy", "bound_priced");
    EXPECT_LE(priced.size(), rl::BaselineGrids{}.bound_prices);
    EXPECT_EQ(bound.size(), 2 * utilisations + priced.size());
    // At a lower utilisation, or a higher price of a miss, the bound holds more instances.
    const auto gpu_hours = [](const Row& row) { return std::stod(row.at("gpu_hours")); };
    const auto hindsight = rows_where(bound, "policy", "bound_hindsight");
    EXPECT_GE(gpu_hours(hindsight.front()), gpu_hours(hindsight.back()));
    if (!priced.empty()) {
      EXPECT_LE(gpu_hours(priced.front()), gpu_hours(priced.back()));
    }
  }
  // Static GPU-hours are the size's: k instances x 4 GPUs x 600 s.
  for (const Row& row : rows_where(all, "policy", "static")) {
    EXPECT_NEAR(std::stod(row.at("gpu_hours")), std::stod(row.at("parameter")) * 4 * 600 / 3600, 1e-6);
  }
  // The same options give the same files.
  EvalCommandOptions again = options;
  again.out_dir = fresh_dir("eval_default_again").string();
  ASSERT_EQ(run_command(again, run_eval_command).code, kExitOk);
  for (const char* file : {"/tuning.csv", "/eval.csv", "/verdicts.csv", "/instances.csv"}) {
    EXPECT_EQ(slurp(again.out_dir + file), slurp(options.out_dir + file)) << file;
  }
}

// A workload light where the recipe trains and three times heavier in its test span: a
// baseline tuned on the training windows is sized for the light load, one tuned on the
// test span would be sized for the heavy one.
// Several policies are named by their run folders; however long, every row of the table
// keeps its figures under the header's columns.
TEST(EvalCommandTest, LongPolicyNamesKeepTheTablesColumns) {
  const std::string recipe = scenario_in_fresh_dir("eval_long_recipe", "recipe.json", small_recipe().dump()).string();
  TrainCommandOptions train;
  train.config_path = recipe;
  train.out_dir = fresh_dir("eval_long").string() + "/a-run-folder-with-a-name-much-longer-than-the-column";
  train.total_decisions = 128;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);
  const std::string copy = fresh_dir("eval_long_copy").string() + "/short";
  std::filesystem::create_directories(copy);
  std::filesystem::copy(train.out_dir, copy, std::filesystem::copy_options::recursive);
  EvalCommandOptions options = small_eval(recipe, "eval_long_out");
  options.policies = {train.out_dir + "/checkpoint", copy + "/checkpoint"};
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::istringstream lines(r.out);
  std::size_t slo_end = std::string::npos, rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  policy ")) {
      slo_end = line.find("SLO") + 3;
      continue;
    }
    if (slo_end == std::string::npos) continue;
    if (line.starts_with("  hindsight")) break;  // the table's end
    ASSERT_GE(line.size(), slo_end) << line;
    EXPECT_EQ(line.substr(slo_end - 1, 2), "% ") << line;  // the SLO figure ends under "SLO"
    ++rows;
  }
  EXPECT_GE(rows, 8u) << r.out;
}

TEST(EvalCommandTest, BaselinesAreTunedOnTheTrainingWindowsNeverOnTheEvaluatedOne) {
  nlohmann::json recipe = small_recipe();
  recipe["workload"] = {{"generator",
                         {{"name", "shift"},
                          {"arrivals", {{"kind", "poisson"}}},
                          {"stages", {{{"rate_per_s", 4}, {"duration_s", 2400}}, {{"rate_per_s", 12}, {"duration_s", 600}}}},
                          {"prompt_tokens", {{"kind", "fixed"}, {"value", 1000}}},
                          {"output_tokens", {{"kind", "fixed"}, {"value", 200}}}}}};
  recipe["rl"]["windows_to_s"] = 1500;
  recipe["rl"]["rate_scales"] = {1};
  recipe["rl"]["validation"] = nlohmann::json::array();
  recipe["rl"]["test"] = {{2400, 2999}};
  EvalCommandOptions options =
      small_eval(scenario_in_fresh_dir("eval_shifted_recipe", "recipe.json", recipe.dump()).string(), "eval_shifted_out");
  options.delays_s = {10};
  const CommandRun r = run_command(options, run_eval_command);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto tuning = rows_where(csv_rows(slurp(options.out_dir + "/tuning.csv")), "policy", "static");
  const int tuned = std::stoi(tuning.back().at("parameter"));
  const auto all = csv_rows(slurp(options.out_dir + "/eval.csv"));
  int hindsight_tuned = 0;  // the size the protocol's rule picks on the test span itself
  for (const Row& row : rows_where(all, "role", "hindsight")) {
    if (hindsight_tuned == 0 && std::stod(row.at("slo_attainment")) >= 0.99) hindsight_tuned = std::stoi(row.at("parameter"));
  }
  EXPECT_GT(hindsight_tuned, tuned) << "the test span needs more instances than the training windows";
  for (const Row& row : rows_where(all, "role", "tuned")) {
    EXPECT_EQ(std::stoi(row.at("start_instances")), tuned) << row.at("policy");
    if (row.at("policy") == "static") {
      EXPECT_EQ(std::stoi(row.at("parameter")), tuned);
    }
  }
}

TEST(EvalCommandTest, AWindowOverlappingTrainingIsRefusedUnlessAsked) {
  const std::string recipe = scenario_in_fresh_dir("eval_overlap", "recipe.json", small_recipe().dump()).string();
  EvalCommandOptions options = small_eval(recipe, "eval_overlap_out");
  options.window_start_s = 3000;  // training episodes cover [0, 3600 + 300 x 1.5)
  options.window_s = 600;
  options.delays_s = {10};
  CommandRun r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("window: the window [3000, 3600) s of the workload overlaps the training windows' [0, 4050)"),
            std::string::npos)
      << r.err;
  options.window_start_s = 4000;  // [4000, 4600) still reaches into [0, 4050)
  r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput) << r.out;
  options.rate_scale = 2;  // [4050, 5250) at twice the rate: clear of training
  options.window_start_s = 4050;
  EXPECT_EQ(run_command(options, run_eval_command).code, kExitOk);
  options.rate_scale = 1;
  options.window_start_s = 3000;
  options.allow_training_overlap = true;
  r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  // A window past the workload's end has no load to judge by (1e12 s ran on for ever).
  for (const auto& [start, length] : {std::pair{1e8, 600.0}, std::pair{3000.0, 1e12}}) {
    options.window_start_s = start;
    options.window_s = length;
    r = run_command(options, run_eval_command);
    EXPECT_EQ(r.code, kExitBadInput) << start << " +" << length;
    EXPECT_TRUE(r.err.find("of a workload that spans") != std::string::npos ||
                r.err.find("must hold at least one decision interval") != std::string::npos)
        << r.err;
  }
  // --split chooses among the recipe's spans: beside a window it would choose nothing.
  options.window_s = 600;
  options.window_start_s = 4050;
  options.rate_scale = 2;
  options.split = "test";
  r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--split test: the recipe's spans are not evaluated when --window-start or --window is given"),
            std::string::npos)
      << r.err;

  // Without test spans the recipe has nothing to judge on by default.
  nlohmann::json bare = small_recipe();
  bare["rl"]["test"] = nlohmann::json::array();
  EvalCommandOptions none = small_eval(scenario_in_fresh_dir("eval_no_test", "recipe.json", bare.dump()).string(),
                                       "eval_no_test_out");
  r = run_command(none, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("rl.test names no spans to evaluate on"), std::string::npos) << r.err;
  none.split = "validation";  // its validation span is there
  none.delays_s = {10};
  EXPECT_EQ(run_command(none, run_eval_command).code, kExitOk);
  none.split = "train";
  r = run_command(none, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--split: expected test or validation, got 'train'"), std::string::npos) << r.err;
}

TEST(EvalCommandTest, BadGridsAreRefusedNamingTheFlag) {
  const std::string recipe = scenario_in_fresh_dir("eval_grids", "recipe.json", small_recipe().dump()).string();
  for (const auto& [flag, grids] :
       {std::pair{"--kv-targets", rl::BaselineGrids{{std::nan("")}, {16}, {2}, {3000}, {32}}},
        std::pair{"--kv-targets", rl::BaselineGrids{{1.5}, {16}, {2}, {3000}, {32}}},
        std::pair{"--request-targets", rl::BaselineGrids{{0.7}, {0}, {2}, {3000}, {32}}},
        std::pair{"--rate-targets", rl::BaselineGrids{{0.7}, {16}, {-1}, {3000}, {32}}},
        std::pair{"--oracle-utilisations", rl::BaselineGrids{{0.7}, {16}, {2}, {3000}, {32}, {1.2}}},
        std::pair{"--multi-metric-scales", rl::BaselineGrids{{0.7}, {16}, {2}, {3000}, {32}, {0.5}, {1}, {-2}}}}) {
    EvalCommandOptions options = small_eval(recipe, "eval_grids_out");
    options.grids = grids;
    const CommandRun r = run_command(options, run_eval_command);
    EXPECT_EQ(r.code, kExitBadInput) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + ": expected numbers in (0, "), std::string::npos) << r.err;
  }
  // An empty grid tunes nothing: refused too.
  EvalCommandOptions options = small_eval(recipe, "eval_grids_out");
  options.grids.oracle_utilisations.clear();
  const CommandRun r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--oracle-utilisations: expected at least one number"), std::string::npos) << r.err;
  // No static size to sweep (it failed inside the environment's reset, exit 70).
  EvalCommandOptions no_static = small_eval(recipe, "eval_grids_out");
  no_static.max_static = 0;
  const CommandRun none = run_command(no_static, run_eval_command);
  EXPECT_EQ(none.code, kExitBadInput);
  EXPECT_NE(none.err.find("--max-static: expected a number of instances in [1, 10000], got 0"), std::string::npos)
      << none.err;
}

// Nor whatever the policy's action kind: a residual recipe's baseline never moves the
// baselines' plays (its NaN keeps the size, as every kind's), and the bound sizes its
// schedule from a capacity measured on one instance that stays one.
TEST(EvalCommandTest, StaticSizesNeverScaleWhateverTheConfigsAutoscaler) {
  for (const bool residual : {false, true}) {
    nlohmann::json recipe = small_recipe();
    recipe["autoscaler"] = {{"policy", "target_tracking"}, {"target_tracking", {{"target", 4}}}};
    if (residual) recipe["rl"]["action"] = "residual";
    const std::string name = residual ? "eval_residual" : "eval_autoscaled";
    EvalCommandOptions options =
        small_eval(scenario_in_fresh_dir(name, "recipe.json", recipe.dump()).string(), name + "_out");
    options.delays_s = {60};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << r.err;
    const auto rows = csv_rows(slurp(options.out_dir + "/eval.csv"));
    for (const auto& row : rows_where(rows, "policy", "static")) {
      EXPECT_EQ(row.at("scale_ups"), "0") << "static " << row.at("parameter");
      EXPECT_EQ(row.at("scale_downs"), "0") << "static " << row.at("parameter");
    }
    // The bound holds more than one instance somewhere (the load needs several).
    double most = 0;
    for (const auto& row : rows_where(rows, "role", "bound")) most = std::max(most, std::stod(row.at("mean_instances")));
    EXPECT_GT(most, 1.5) << name;
  }
}

TEST(EvalCommandTest, ABoundPriceCountOutsideItsRangeIsRefused) {
  const std::string recipe = scenario_in_fresh_dir("eval_prices", "recipe.json", small_recipe().dump()).string();
  for (const std::size_t prices : {std::size_t{0}, std::size_t{1001}}) {
    EvalCommandOptions options = small_eval(recipe, "eval_prices_out");
    options.grids.bound_prices = prices;
    const CommandRun r = run_command(options, run_eval_command);
    EXPECT_EQ(r.code, kExitBadInput) << prices;
    EXPECT_NE(r.err.find("--bound-prices: expected a count in [1, 1000], got " + std::to_string(prices)),
              std::string::npos)
        << r.err;
  }
}

TEST(EvalCommandTest, ABrokenCapacityModelOrTargetIsRefusedNamingTheFlag) {
  const std::string recipe = scenario_in_fresh_dir("eval_capacity", "recipe.json", small_recipe().dump()).string();
  EvalCommandOptions options = small_eval(recipe, "eval_capacity_out");
  options.capacity_model = (std::filesystem::path(recipe).parent_path() / "missing.json").string();
  CommandRun r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--capacity-model: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
  options = small_eval(recipe, "eval_capacity_out");
  options.grids.capacity_targets = {0.8, 0.0};
  r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--capacity-targets: expected numbers in (0, 100], got 0"), std::string::npos) << r.err;
}

TEST(EvalCommandTest, RunsOnRealTracesItNeverSaw) {
  const std::string recipe = scenario_in_fresh_dir("eval_real_recipe", "recipe.json", small_recipe().dump()).string();
  for (const char* file : {"traces/azure2023_conv.csv", "traces/mooncake_fast25_conversation.jsonl"}) {
    const std::string trace = meshsim::testing::shared_path(file);
    MESHSIM_NEED_SHARED_FILE(trace);
    EvalCommandOptions options = small_eval(recipe, "eval_real");
    options.trace = trace;
    options.window_s = 600;
    options.delays_s = {10};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << file << ": " << r.err;
    const auto all = csv_rows(slurp(options.out_dir + "/eval.csv"));
    EXPECT_EQ(rows_where(all, "role", "tuned").size(), 7u) << file;
    EXPECT_EQ(all.front().at("window"), "window") << file;
  }
}

// The ServeGen recipes (experiments/rl, one per model, and one training on both) train on
// days 1-10 of the 14, validate on the whole of day 11 and test on days 12, 13 and 14,
// each a window.
TEST(EvalCommandTest, TheServeGenRecipesHoldOutTheirLastFourDays) {
  const auto both = configs::load_scenario(std::string(MESHSIM_SOURCE_DIR) + "/experiments/rl/servegen-both-recipe.json");
  ASSERT_TRUE(both) << both.error().message;
  ASSERT_EQ(both->rl->train_also.size(), 1u);
  EXPECT_EQ(fs::path(both->rl->train_also[0]).filename(), "servegen-recipe.json");
  for (const char* file : {"servegen-recipe.json", "servegen-m-large-recipe.json", "servegen-both-recipe.json"}) {
    const auto recipe = configs::load_scenario(std::string(MESHSIM_SOURCE_DIR) + "/experiments/rl/" + file);
    ASSERT_TRUE(recipe) << recipe.error().message;
    const configs::RlSpec& rl = *recipe->rl;
    constexpr double kDay = 86400;
    EXPECT_LE(rl.training_span().to_s, 10 * kDay) << file;
    ASSERT_EQ(rl.validation.size(), 1u) << file;
    EXPECT_EQ(rl.validation[0].from_s, 10 * kDay) << file;
    EXPECT_EQ(rl.validation[0].to_s, 11 * kDay) << file;
    ASSERT_EQ(rl.test.size(), 3u) << file;
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(rl.test[d].from_s, (11 + d) * kDay) << file;
      EXPECT_EQ(rl.test[d].to_s, (12 + d) * kDay) << file;
    }
    EXPECT_EQ(rl.action, configs::ActionKind::kResidual) << file;
  }
}

TEST(EvalCommandTest, APolicyActsAsItWasTrainedWhateverTheEvaluatedScenarioSays) {
  // A discrete policy, deciding every 30 s, priced by its own reward weights.
  nlohmann::json recipe = small_recipe();
  recipe["rl"]["discrete_max_step"] = 1;
  recipe["rl"]["decision_interval_s"] = 30;
  recipe["rl"]["reward"]["churn_weight"] = 0.05;
  TrainCommandOptions train;
  train.config_path = scenario_in_fresh_dir("eval_trained_as", "recipe.json", recipe.dump()).string();
  train.out_dir = fresh_dir("eval_trained_as_run").string();
  train.total_decisions = 128;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);

  // Evaluated on the recipe, and on the same scenario without an rl object (continuous
  // actions, 15 s, other weights and windows by default): the same files.
  nlohmann::json bare = recipe;
  bare.erase("rl");
  std::vector<std::string> csvs;
  for (const auto& [name, tree] : {std::pair{"recipe", recipe}, std::pair{"bare", bare}}) {
    EvalCommandOptions options = small_eval(
        scenario_in_fresh_dir(std::string("eval_trained_as_") + name, "s.json", tree.dump()).string(),
        std::string("eval_trained_as_out_") + name);
    options.policies = {train.out_dir + "/checkpoint"};
    options.delays_s = {10};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << name << ": " << r.err;
    csvs.push_back(slurp(options.out_dir + "/eval.csv"));
  }
  EXPECT_EQ(csvs[0], csvs[1]);
}

// A policy trained on several recipes (rl.train_also) is judged on each by that recipe's
// own spec (its test spans, delays, reward), and on any other scenario by its first's.
TEST(EvalCommandTest, APolicyTrainedOnSeveralRecipesPlaysEachByItsOwnSpec) {
  nlohmann::json other = small_recipe();
  other["name"] = "split-test";
  other["rl"]["test"] = {{4800, 5100}, {5100, 5400}};
  other["rl"]["reward"]["churn_weight"] = 0.05;
  const fs::path other_path = scenario_in_fresh_dir("eval_mixed", "other.json", other.dump());
  nlohmann::json recipe = small_recipe();
  recipe["rl"]["train_also"] = {"other.json"};
  const fs::path recipe_path = other_path.parent_path() / "recipe.json";
  std::ofstream(recipe_path) << recipe.dump();
  TrainCommandOptions train;
  train.config_path = recipe_path.string();
  train.out_dir = fresh_dir("eval_mixed_run").string();
  train.total_decisions = 128;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);

  nlohmann::json bare = other;
  bare.erase("rl");
  const fs::path bare_path = other_path.parent_path() / "bare.json";
  std::ofstream(bare_path) << bare.dump();
  for (const auto& [path, starts] : {std::pair{other_path, std::set<std::string>{"4800", "5100"}},
                                     std::pair{recipe_path, std::set<std::string>{"4800"}},
                                     std::pair{bare_path, std::set<std::string>{"4800"}}}) {
    EvalCommandOptions options = small_eval(path.string(), "eval_mixed_" + path.stem().string());
    options.policies = {train.out_dir + "/checkpoint"};
    options.delays_s = {10};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << path << ": " << r.err;
    std::set<std::string> played;
    for (const Row& row : rows_where(csv_rows(slurp(options.out_dir + "/eval.csv")), "policy", "ppo")) {
      played.insert(row.at("window_start_s"));
    }
    EXPECT_EQ(played, starts) << path;
  }
}

TEST(EvalCommandTest, ARateScalePlaysTheWindowFaster) {
  const std::string recipe = scenario_in_fresh_dir("eval_rate_recipe", "recipe.json", small_recipe().dump()).string();
  std::map<double, double> tracked_instances;
  for (const double scale : {1.0, 3.0}) {
    EvalCommandOptions options = small_eval(recipe, "eval_rate_scale");
    options.workload_config = configs::default_scenario_path();  // 5.5 requests/s
    options.window_start_s = 600;
    options.window_s = 600;
    options.rate_scale = scale;
    options.delays_s = {10};
    const CommandRun r = run_command(options, run_eval_command);
    ASSERT_EQ(r.code, kExitOk) << r.err;
    if (scale == 3.0) {
      EXPECT_NE(r.out.find("window [600, 2400) s at 3x its rate"), std::string::npos) << r.out;
    }
    for (const auto& row : csv_rows(slurp(options.out_dir + "/eval.csv"))) {
      if (row.at("policy") == "static") {  // simulated time is the window's length at any rate
        EXPECT_NEAR(std::stod(row.at("gpu_hours")), std::stod(row.at("parameter")) * 4 * 600 / 3600, 1e-6);
      }
      if (row.at("policy") == "target_tracking_rate") tracked_instances[scale] = std::stod(row.at("mean_instances"));
    }
  }
  EXPECT_GT(tracked_instances[3.0], 1.5 * tracked_instances[1.0]);
}

TEST(EvalCommandTest, APolicyForAnotherScenarioOrAWindowOutsideTheTraceIsRefused) {
  const std::string recipe = scenario_in_fresh_dir("eval_mixed_recipe", "recipe.json", small_recipe().dump()).string();
  TrainCommandOptions train;
  train.config_path = recipe;
  train.out_dir = fresh_dir("eval_policy_mixed").string();
  train.total_decisions = 128;
  ASSERT_EQ(run_command(train, run_train_command).code, kExitOk);
  // The same recipe with split prompt and token pools: two pools and the migration entry.
  nlohmann::json split = small_recipe();
  split["serving"]["start_state"] = {{{"tag", "prompt"}, {"count", 2}}, {{"tag", "token"}, {"count", 2}}};
  EvalCommandOptions options =
      small_eval(scenario_in_fresh_dir("eval_split", "split.json", split.dump()).string(), "eval_split_out");
  options.policies = {train.out_dir + "/checkpoint"};
  CommandRun r = run_command(options, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("the policy was trained for 35 features and 1 action entries; this scenario has 44 and 3"),
            std::string::npos)
      << r.err;

  EvalCommandOptions outside = small_eval(recipe, "eval_outside");
  outside.window_start_s = 1e6;
  outside.allow_training_overlap = true;
  r = run_command(outside, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  // (Its length, the rest of the workload, came out negative: "[1e+06, +-971200) s must
  // hold at least one decision interval".)
  EXPECT_NE(r.err.find("--window-start 1e+06: past the workload, which spans 28800 s"), std::string::npos) << r.err;
  outside.window_start_s = 0;
  outside.policies = {"/nonexistent"};
  r = run_command(outside, run_eval_command);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("/nonexistent/state.json: cannot read"), std::string::npos) << r.err;
}

// A verdict's share of the gap is printed as a percentage only where one means something:
// "closes -1046.7% of the gap" once came from a policy costing far more than a front
// that lay just above the bound. Over shares of every size, a percentage appears exactly
// for shares in [0, 1], and it lies in [0, 100].
TEST(EvalReportTest, AGapShareIsAPercentageOnlyFromNoneToAllOfTheGap) {
  std::mt19937_64 rng(11);
  std::vector<double> shares = {-10.467, -1e-9, 0, 0.5, 1, 1 + 1e-9, 1.5, 1e6, -1e6};
  for (int i = 0; i < 200; ++i) shares.push_back(std::uniform_real_distribution<double>(-3, 4)(rng));
  for (const double share : shares) {
    const std::string text = gap_closed_text(share);
    const bool inside = share >= 0 && share <= 1;
    EXPECT_EQ(text.find('%') != std::string::npos, inside) << share << ": " << text;
    if (inside) {
      const double percent = std::stod(text.substr(text.find("closes ") + 7));
      EXPECT_GE(percent, 0) << text;
      EXPECT_LE(percent, 100) << text;
    }
  }
}

}  // namespace
}  // namespace meshsim::cli
