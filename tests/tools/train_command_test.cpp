// `meshsim train`: a short run writes its learning curve, checkpoint and resolved config;
// a run stopped early and resumed writes the same curve as one run straight through;
// an earlier run's folder is never overwritten; bad options are refused clearly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "configs/scenario_config.hpp"
#include "sim/engine/number_text.hpp"
#include "rl/env/evaluation.hpp"
#include "tests/local_http.hpp"
#include "tests/shared_data.hpp"
#include "tests/tools/outcome_rows.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/train_command.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using testing::CommandRun;
using testing::fresh_dir;
using testing::run_command;
using testing::scenario_in_fresh_dir;
using testing::slurp;

// The default recipe made small: 2 environments x 8 decisions, 4 iterations, episodes of
// 4 decisions, a checkpoint every iteration, validated on [2600, 2900) s.
std::string small_recipe() {
  std::ifstream in(configs::default_training_path());
  nlohmann::json recipe = nlohmann::json::parse(in);
  recipe["workload"]["generator"]["duration_s"] = 3600;
  recipe["rl"]["episode_s"] = 60;
  recipe["rl"]["windows_to_s"] = 2400;
  recipe["rl"]["validation"] = {{2600, 2900}};
  recipe["rl"]["test"] = {{3000, 3600}};
  recipe["rl"]["tuning_windows"] = 2;
  recipe["rl"]["ppo"] = {{"num_envs", 2},    {"rollout_steps", 8},     {"minibatches", 2},
                         {"update_epochs", 1}, {"total_decisions", 64}, {"checkpoint_every", 1}};
  return recipe.dump();
}

CommandRun train(const TrainCommandOptions& options) { return run_command(options, run_train_command); }

// The curve without its wall-clock columns (the last three).
std::string deterministic_columns(const std::string& csv) {
  std::istringstream in(csv);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    for (int i = 0; i < 3; ++i) line = line.substr(0, line.rfind(','));
    out += line + '\n';
  }
  return out;
}

TEST(TrainCommandTest, WritesTheCurveCheckpointAndConfigAndRefusesToOverwrite) {
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_cfg", "recipe.json", small_recipe()).string();
  options.out_dir = fresh_dir("train_once").string();
  const CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("iteration 4/4"), std::string::npos) << run.out;
  const std::string csv = slurp(options.out_dir + "/learning_curve.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);  // header + 4 iterations
  EXPECT_EQ(csv.rfind("iteration,decisions,", 0), 0u);
  EXPECT_TRUE(std::filesystem::exists(options.out_dir + "/checkpoint/policy.pt"));
  EXPECT_TRUE(std::filesystem::exists(options.out_dir + "/checkpoint/state.json"));
  const auto config = nlohmann::json::parse(slurp(options.out_dir + "/config.json"));
  EXPECT_EQ(config["rl"]["ppo"]["num_envs"], 2);
  // Every checkpoint played on the validation span; the best by the protocol's criterion
  // (the cheapest reaching 99%, else the highest attainment) kept as best/.
  const auto rows = testing::csv_rows(slurp(options.out_dir + "/validation.csv"));
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<rl::Outcome> played = testing::outcomes_of(rows);
  for (const rl::Outcome& o : played) EXPECT_GT(o.gpu_hours, 0);
  const int best = rl::pick(played, 0.99);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rows[static_cast<std::size_t>(i)].at("best"), i == best ? "1" : "0");
  EXPECT_NE(run.out.find("validation after iteration " + rows[static_cast<std::size_t>(best)].at("iteration")),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(options.out_dir + "/best/state.json"));
  EXPECT_FALSE(std::filesystem::exists(options.out_dir + "/best.tmp"));
  // The level a checkpoint must beat: the tuned static size held on the same span.
  const auto baseline = testing::csv_rows(slurp(options.out_dir + "/validation_baseline.csv"));
  ASSERT_EQ(baseline.size(), 1u);
  EXPECT_EQ(baseline[0].at("policy"), "static");
  EXPECT_NEAR(std::stod(baseline[0].at("mean_instances")), std::stod(baseline[0].at("parameter")), 1e-3);
  // Pooled over the same plays as each checkpoint's: GPU-hours per instance agree.
  const double per_instance = std::stod(baseline[0].at("gpu_hours")) / std::stod(baseline[0].at("mean_instances"));
  EXPECT_GT(per_instance, 0);
  for (const auto& row : rows) {
    EXPECT_NEAR(std::stod(row.at("gpu_hours")) / std::stod(row.at("mean_instances")), per_instance, 0.01 * per_instance);
  }
  EXPECT_NE(run.out.find("validation baseline: the tuned static size " + baseline[0].at("parameter") + " holds SLO "),
            std::string::npos)
      << run.out;

  const CommandRun again = train(options);
  EXPECT_EQ(again.code, kExitOutputError);
  EXPECT_NE(again.err.find("holds an earlier training run: pass --resume"), std::string::npos) << again.err;
  EXPECT_EQ(slurp(options.out_dir + "/learning_curve.csv"), csv);  // untouched
}

TEST(TrainCommandTest, TheProgressLineSaysWhenNoEpisodeEnded) {
  nlohmann::json recipe = nlohmann::json::parse(small_recipe());
  recipe["rl"]["episode_s"] = 600;  // 40 decisions an episode, 8 a rollout
  recipe["rl"]["windows_to_s"] = 1600;  // training windows end before the validation span
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_no_episode_cfg", "recipe.json", recipe.dump()).string();
  options.out_dir = fresh_dir("train_no_episode").string();
  options.max_iterations = 1;
  const CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("episode return - (no episode ended)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("episode return 0.00"), std::string::npos) << run.out;
}

TEST(TrainCommandTest, StoppingAndResumingGivesTheCurveOfOneRun) {
  const std::string config = scenario_in_fresh_dir("train_resume_cfg", "recipe.json", small_recipe()).string();
  TrainCommandOptions whole;
  whole.config_path = config;
  whole.out_dir = fresh_dir("train_whole").string();
  ASSERT_EQ(train(whole).code, kExitOk);

  TrainCommandOptions part = whole;
  part.out_dir = fresh_dir("train_parts").string();
  part.max_iterations = 1;
  const CommandRun first = train(part);
  ASSERT_EQ(first.code, kExitOk) << first.err;
  EXPECT_NE(first.out.find("stopped after iteration 1 of 4: continue with --resume"), std::string::npos) << first.out;
  part.resume = true;
  part.max_iterations = 2;
  ASSERT_EQ(train(part).code, kExitOk);  // iterations 2 and 3
  part.max_iterations.reset();
  const CommandRun last = train(part);
  ASSERT_EQ(last.code, kExitOk) << last.err;
  EXPECT_NE(last.out.find("resumed after 3"), std::string::npos) << last.out;
  EXPECT_EQ(deterministic_columns(slurp(part.out_dir + "/learning_curve.csv")),
            deterministic_columns(slurp(whole.out_dir + "/learning_curve.csv")));
  EXPECT_EQ(slurp(part.out_dir + "/validation.csv"), slurp(whole.out_dir + "/validation.csv"));
  EXPECT_EQ(slurp(part.out_dir + "/best/state.json"), slurp(whole.out_dir + "/best/state.json"));
}

// Stopped before its first checkpoint (a signal, a full disk: its config.json, inputs.json
// and part of its curve written, no checkpoint), a training is no dead end: --resume
// restarts it from iteration 0 and it trains as one run would; a folder with no training
// in it is still refused.
TEST(TrainCommandTest, AResumeOfARunStoppedBeforeItsFirstCheckpointRestartsFromIterationZero) {
  const std::string config = scenario_in_fresh_dir("train_early_cfg", "recipe.json", small_recipe()).string();
  TrainCommandOptions whole;
  whole.config_path = config;
  whole.out_dir = fresh_dir("train_early_whole").string();
  ASSERT_EQ(train(whole).code, kExitOk);

  TrainCommandOptions part = whole;
  part.out_dir = fresh_dir("train_early_part").string();
  part.max_iterations = 1;
  ASSERT_EQ(train(part).code, kExitOk);
  // What a stop before the first checkpoint leaves: no checkpoint, a curve row or none.
  for (const char* made_later : {"checkpoint", "best", "validation.csv", "validation_baseline.csv"}) {
    std::filesystem::remove_all(std::filesystem::path(part.out_dir) / made_later);
  }
  part.max_iterations.reset();
  EXPECT_EQ(train(part).code, kExitOutputError) << "a fresh run is still refused: the folder holds a training";
  part.resume = true;
  const CommandRun resumed = train(part);
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_NE(resumed.err.find("was stopped before its first checkpoint: training restarts from iteration 0"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(deterministic_columns(slurp(part.out_dir + "/learning_curve.csv")),
            deterministic_columns(slurp(whole.out_dir + "/learning_curve.csv")));
  EXPECT_EQ(slurp(part.out_dir + "/checkpoint/policy.pt"), slurp(whole.out_dir + "/checkpoint/policy.pt"));
  EXPECT_EQ(slurp(part.out_dir + "/validation.csv"), slurp(whole.out_dir + "/validation.csv"));

  TrainCommandOptions empty = whole;
  empty.out_dir = fresh_dir("train_early_empty").string();
  empty.resume = true;
  const CommandRun nothing = train(empty);
  EXPECT_EQ(nothing.code, kExitBadInput);
  EXPECT_NE(nothing.err.find("holds no training to resume"), std::string::npos) << nothing.err;
}

TEST(TrainCommandTest, AResumeFedOtherInputsIsRefusedNamingWhatChanged) {
  const std::string config = scenario_in_fresh_dir("train_inputs_cfg", "recipe.json", small_recipe()).string();
  const fs::path catalog = fs::path(config).parent_path() / "catalog";
  fs::create_directories(catalog);
  std::ofstream(catalog / "models.json") << R"({"models": []})";
  TrainCommandOptions options;
  options.config_path = config;
  options.catalog = catalog.string();
  options.out_dir = fresh_dir("train_inputs").string();
  options.max_iterations = 1;
  const CommandRun first = train(options);
  ASSERT_EQ(first.code, kExitOk) << first.err;
  const std::string curve = slurp(options.out_dir + "/learning_curve.csv");
  options.resume = true;

  nlohmann::json other = nlohmann::json::parse(small_recipe());
  other["rl"]["reward"]["cost_weight"] = 0.5;
  std::ofstream(config) << other.dump();
  CommandRun run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--resume with other inputs than the run was started with (config.rl.reward.cost_weight: "
                         "was 0.01, now 0.5)"),
            std::string::npos)
      << run.err;
  std::ofstream(config) << small_recipe();
  std::ofstream(catalog / "models.json") << R"({"models": [], "comment": "edited"})";
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("(inputs.catalogs." + catalog.string() + ": was"), std::string::npos) << run.err;
  EXPECT_EQ(slurp(options.out_dir + "/learning_curve.csv"), curve);  // nothing trained

  std::ofstream(catalog / "models.json") << R"({"models": []})";
  options.threads = 2;  // the speed alone: the same run
  run = train(options);
  EXPECT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("resumed after 1"), std::string::npos) << run.out;
}

TEST(TrainCommandTest, ADamagedCheckpointIsRefusedAndAnInterruptedOneRecovered) {
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_damage_cfg", "recipe.json", small_recipe()).string();
  options.out_dir = fresh_dir("train_damage").string();
  options.max_iterations = 2;
  ASSERT_EQ(train(options).code, kExitOk);
  const fs::path checkpoint = fs::path(options.out_dir) / "checkpoint";
  const std::string saved = slurp(checkpoint / "state.json");
  options.resume = true;
  options.max_iterations = 1;
  for (const auto& [edit, expected] : std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>>{
           {[](nlohmann::json& j) { j["iteration"] = -1; }, "state.json: iteration: expected an integer in [0, 4], got -1"},
           {[](nlohmann::json& j) { j["decisions"] = 3; }, "state.json: decisions: expected 32 after 2 iterations, got 3"},
           {[](nlohmann::json& j) { j["observation_stats"]["mean"] = {1, 2, 3}; },
            "state.json: observation_stats.mean: expected a list of"},
           {[](nlohmann::json& j) { j["envs"][1]["actions"] = std::vector<float>(100, 1.0f); },
            "state.json: envs[1]: actions: expected whole steps"},
           // Valid alone, but 2 iterations of 8 steps end where an episode of 4 does.
           {[](nlohmann::json& j) { j["envs"][0]["actions"] = {1}; },
            "state.json: envs[0].actions: expected 0 steps of 1 entries (2 iterations of 8 steps in episodes of 4), "
            "got 1 entries"},
           {[](nlohmann::json& j) { j["bogus"] = 1; }, "state.json: bogus: unknown key"}}) {
    nlohmann::json state = nlohmann::json::parse(saved);
    edit(state);
    std::ofstream(checkpoint / "state.json") << state.dump();
    const CommandRun run = train(options);
    EXPECT_EQ(run.code, kExitBadInput) << expected;
    EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
  }
  // The learning curve's rows up to the checkpoint are continued as they are: each must be
  // there, in order, whole (a row lost or cut was carried into the resumed curve).
  std::ofstream(checkpoint / "state.json") << saved;
  const fs::path curve = fs::path(options.out_dir) / "learning_curve.csv";
  const std::string rows = slurp(curve);
  const std::string header = rows.substr(0, rows.find('\n') + 1);
  const std::string first = rows.substr(header.size(), rows.find('\n', header.size()) + 1 - header.size());
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {header + first, "learning_curve.csv:3: expected iteration 2's row (the checkpoint is after iteration 2)"},
           {header + rows.substr(header.size() + first.size()), "learning_curve.csv:2: expected iteration 1's row"},
           {header + first.substr(0, first.size() / 2) + "\n" + rows.substr(header.size() + first.size()),
            "learning_curve.csv:2: expected iteration 1's row with"}}) {
    std::ofstream(curve) << text;
    const CommandRun run = train(options);
    EXPECT_EQ(run.code, kExitBadInput) << expected;
    EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
  }
  std::ofstream(curve) << rows;
  // So are the validation rows the best checkpoint is chosen by (an attainment of 5 would
  // have made its checkpoint the best).
  const fs::path validation = fs::path(options.out_dir) / "validation.csv";
  const std::string table = slurp(validation);
  const std::string table_header = table.substr(0, table.find('\n') + 1);
  const std::string cells = table.substr(table_header.size());
  const auto second_comma = cells.find(',', cells.find(',') + 1);
  for (const std::string& edited : {cells.substr(0, cells.find(',') + 1) + "5" + cells.substr(second_comma),
                                   cells.substr(0, cells.find(',') + 1) + "nan" + cells.substr(second_comma),
                                   cells + cells}) {  // a row twice: iterations not rising
    std::ofstream(validation) << table_header << edited;
    const CommandRun run = train(options);
    EXPECT_EQ(run.code, kExitBadInput) << edited;
    EXPECT_NE(run.err.find("validation.csv:"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(": expected iteration,slo_attainment"), std::string::npos) << run.err;
  }
  // A missing table, or one without the row of a checkpoint validated on the way, would
  // pick best/ from other rows than an uninterrupted run.
  fs::remove(validation);
  CommandRun missing = train(options);
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("validation.csv: missing"), std::string::npos) << missing.err;
  std::ofstream(validation) << table_header << cells.substr(cells.find('\n') + 1);
  missing = train(options);
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("validation.csv: no row for iteration 1"), std::string::npos) << missing.err;
  std::ofstream(validation) << table;
  // Interrupted while swapping in the next checkpoint: the previous one moved aside, the
  // new one half written. The resume takes the previous one.
  fs::rename(checkpoint, checkpoint.string() + ".old");
  fs::create_directories(checkpoint.string() + ".tmp");
  std::ofstream(checkpoint.string() + ".tmp/policy.pt") << "half";
  const CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("resumed after 2"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists(checkpoint.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(checkpoint.string() + ".old"));
  // Stopped while validating its last checkpoint (its row not written): the resume plays
  // that checkpoint first, as an uninterrupted run did.
  const std::string three = slurp(validation);
  std::ofstream(validation) << three.substr(0, three.rfind('\n', three.size() - 2) + 1);
  const CommandRun revalidated = train(options);
  ASSERT_EQ(revalidated.code, kExitOk) << revalidated.err;
  EXPECT_NE(revalidated.out.find("validation after iteration 3"), std::string::npos) << revalidated.out;
  std::vector<std::string> iterations;
  for (const auto& row : testing::csv_rows(slurp(validation))) iterations.push_back(row.at("iteration"));
  EXPECT_EQ(iterations, (std::vector<std::string>{"1", "2", "3", "4"}));
}

// Runs `options` as ranks 0 and 1 of a world of two, concurrently (one thread each).
std::vector<CommandRun> train_on_two_ranks(TrainCommandOptions options, const std::string& store) {
  std::vector<CommandRun> runs(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank, options]() mutable {
      options.world_size = 2;
      options.rank = rank;
      options.store = "file://" + store;
      options.timeout_s = 60;
      runs[static_cast<std::size_t>(rank)] = train(options);
    });
  }
  for (auto& thread : threads) thread.join();
  return runs;
}

// Every number of two learning curves' deterministic columns agrees to float summation order.
void expect_curves_close(const std::string& got, const std::string& want) {
  const auto got_rows = testing::csv_rows(deterministic_columns(got));
  const auto want_rows = testing::csv_rows(deterministic_columns(want));
  ASSERT_EQ(got_rows.size(), want_rows.size());
  for (std::size_t i = 0; i < got_rows.size(); ++i) {
    for (const auto& [column, cell] : want_rows[i]) {
      const double expected = std::stod(cell);
      EXPECT_NEAR(std::stod(got_rows[i].at(column)), expected, 1e-4 * std::max(1.0, std::abs(expected)))
          << "iteration " << i + 1 << ", " << column;
    }
  }
}

TEST(TrainCommandTest, TwoRanksTrainTheRunOfOneProcessAndRankZeroWritesIt) {
  const std::string config = scenario_in_fresh_dir("train_ranks_cfg", "recipe.json", small_recipe()).string();
  TrainCommandOptions one;
  one.config_path = config;
  one.out_dir = fresh_dir("train_ranks_one").string();
  ASSERT_EQ(train(one).code, kExitOk);

  TrainCommandOptions two = one;
  two.out_dir = fresh_dir("train_ranks_two").string();
  const std::string store = fresh_dir("train_ranks_store").string() + "/store";
  const auto runs = train_on_two_ranks(two, store);
  ASSERT_EQ(runs[0].code, kExitOk) << runs[0].err;
  ASSERT_EQ(runs[1].code, kExitOk) << runs[1].err;
  EXPECT_NE(runs[0].out.find("2 environments over 2 ranks (1 each)"), std::string::npos) << runs[0].out;
  EXPECT_EQ(runs[1].out, "");  // rank 0 speaks for the run
  expect_curves_close(slurp(two.out_dir + "/learning_curve.csv"), slurp(one.out_dir + "/learning_curve.csv"));
  EXPECT_TRUE(std::filesystem::exists(two.out_dir + "/checkpoint/state.json"));

  // Rank 0 refuses the folder (it holds that run): rank 1 stops too instead of waiting.
  const auto refused = train_on_two_ranks(two, store + "-again");
  EXPECT_EQ(refused[0].code, kExitOutputError);
  EXPECT_NE(refused[0].err.find("holds an earlier training run"), std::string::npos) << refused[0].err;
  EXPECT_EQ(refused[1].code, kExitBadInput);
  EXPECT_NE(refused[1].err.find("rank 0 could not start"), std::string::npos) << refused[1].err;
}

TEST(TrainCommandTest, LiveMetricsCanBeScrapedWhileItTrains) {
  TrainCommandOptions options;  // the default recipe: about a second per iteration
  options.total_decisions = 4096;
  options.threads = 1;
  options.out_dir = fresh_dir("train_metrics").string();
  const int port = meshsim::testing::free_port();
  options.metrics_listen = "127.0.0.1:" + std::to_string(port);
  CommandRun run;
  // Scraped as Prometheus would until an iteration's figures show up (or the run ends).
  const std::string seen =
      meshsim::testing::scrape_while(port, "\nmeshsim_train_iteration 1\n", [&] { run = train(options); });
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.err.find("metrics at http://127.0.0.1:" + std::to_string(port) + "/metrics"), std::string::npos);
  EXPECT_NE(seen.find("\nmeshsim_train_iteration 1\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\nmeshsim_train_iterations 4\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("# TYPE meshsim_train_decisions_total counter\nmeshsim_train_decisions_total 1024\n"),
            std::string::npos) << seen;
  EXPECT_NE(seen.find("\nmeshsim_train_mean_reward "), std::string::npos);
}

TEST(TrainCommandTest, TrainsOnARealTraceWithWindowsOverAllOfIt) {
  const std::string trace = meshsim::testing::shared_path("traces/azure2023_conv.csv");
  MESHSIM_NEED_SHARED_FILE(trace);
  TrainCommandOptions options;  // the default recipe, whose windows end past this trace's hour
  options.trace = trace;
  options.total_decisions = 1024;
  options.out_dir = fresh_dir("train_real").string();
  const CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.err.find("note: --trace: training windows over the whole trace, no validation or test spans"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(options.out_dir + "/validation.csv"));
}

// The training's seed varies the policy, never the load: two seeds keep the recipe's
// scenario seed (which draws the synthetic workload every play and evaluation replays)
// and record their own as rl.ppo.seed.
TEST(TrainCommandTest, TheSeedIsTheTrainingsAndTheWorkloadStaysTheRecipes) {
  const std::string recipe = scenario_in_fresh_dir("train_seeds_cfg", "recipe.json", small_recipe()).string();
  std::vector<nlohmann::json> configs;
  std::vector<std::string> curves;
  for (const char* seed : {"3", "4"}) {
    TrainCommandOptions options;
    options.config_path = recipe;
    options.out_dir = fresh_dir(std::string("train_seed_") + seed).string();
    options.seed = seed;
    options.plot = false;
    options.quiet = true;
    ASSERT_EQ(train(options).code, kExitOk);
    configs.push_back(nlohmann::json::parse(slurp(options.out_dir + "/config.json")));
    curves.push_back(deterministic_columns(slurp(options.out_dir + "/learning_curve.csv")));
    EXPECT_EQ(configs.back()["rl"]["ppo"]["seed"], std::stoull(seed));
  }
  EXPECT_EQ(configs[0]["seed"], nlohmann::json::parse(slurp(recipe))["seed"]);
  EXPECT_EQ(configs[0]["seed"], configs[1]["seed"]);
  EXPECT_EQ(configs[0]["workload"], configs[1]["workload"]);
  EXPECT_NE(curves[0], curves[1]) << "the seed still changes the training";
}

// The residual, constrained recipe: PPO-Lagrangian's multiplier follows dual ascent on
// each iteration's SLO attainment (the curve's own columns give the next value), and an
// untrained residual policy plays its baseline exactly.
TEST(TrainCommandTest, TheLagrangeMultiplierRisesWhileTheSloIsMissedAndFallsWhileItIsHeld) {
  nlohmann::json recipe = nlohmann::json::parse(small_recipe());
  recipe["rl"]["action"] = "residual";
  recipe["rl"]["residual_base"] = {{"metric", "arrival_rate"}, {"target", 4}};
  recipe["rl"]["slo_target"] = 0.999;
  recipe["rl"]["ppo"]["lagrange_rate"] = 0.5;
  recipe["rl"]["ppo"]["lagrange_initial"] = 2.0;
  recipe["rl"]["ppo"]["total_decisions"] = 96;
  recipe["rl"]["ppo"]["rollout_steps"] = 4;
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_lagrange_cfg", "recipe.json", recipe.dump()).string();
  options.out_dir = fresh_dir("train_lagrange").string();
  options.plot = false;
  options.quiet = true;
  ASSERT_EQ(train(options).code, kExitOk);
  const auto rows = testing::csv_rows(slurp(options.out_dir + "/learning_curve.csv"));
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(std::stod(rows[0].at("lagrange")), 2.0);
  bool rose = false, fell = false;
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    const double slo = std::stod(rows[i].at("slo_attainment")), now = std::stod(rows[i].at("lagrange"));
    const double violation = std::clamp((0.999 - slo) / 0.001, -1.0, 1.0);
    EXPECT_NEAR(std::stod(rows[i + 1].at("lagrange")), std::clamp(now * std::exp(0.5 * violation), 0.01, 1000.0),
                1e-6 * now)
        << "iteration " << i + 1;
    rose = rose || violation > 0;
    fell = fell || violation < 0;
  }
  EXPECT_TRUE(rose || fell);
}

// A residual policy's checkpoints are held to the lower of rl.slo_target and its base's
// SLO on the validation spans: where target tracking misses the target there, the
// cheapest checkpoint at its SLO is kept, not whichever spent the most for attainment.
TEST(TrainCommandTest, AResidualPolicyIsValidatedAgainstTheTargetTrackingItCorrects) {
  nlohmann::json recipe = nlohmann::json::parse(small_recipe());
  recipe["rl"]["action"] = "residual";
  recipe["rl"]["residual_base"] = {{"metric", "arrival_rate"}, {"target", 4}};
  recipe["rl"]["slo_target"] = 1.0;  // out of reach on the validation span
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_residual_cfg", "recipe.json", recipe.dump()).string();
  options.out_dir = fresh_dir("train_residual").string();
  options.plot = false;
  const CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const auto baseline = testing::csv_rows(slurp(options.out_dir + "/validation_baseline.csv"));
  ASSERT_EQ(baseline.size(), 2u);
  EXPECT_EQ(baseline[1].at("policy"), "residual_base");
  EXPECT_EQ(baseline[1].at("parameter"), "4");
  const double base_slo = std::stod(baseline[1].at("slo_attainment"));
  ASSERT_LT(base_slo, 1.0);
  EXPECT_NE(run.out.find("checkpoints are held to SLO " + percent_text(base_slo)), std::string::npos) << run.out;
  const auto rows = testing::csv_rows(slurp(options.out_dir + "/validation.csv"));
  ASSERT_EQ(rows.size(), 4u);
  const int best = rl::pick(testing::outcomes_of(rows), base_slo);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rows[static_cast<std::size_t>(i)].at("best"), i == best ? "1" : "0");
  // Acting deterministically, the barely trained head still keeps the middle choice: the
  // first checkpoint plays its base exactly.
  for (const char* column : {"slo_attainment", "gpu_hours", "mean_instances", "actions_per_hour"}) {
    EXPECT_EQ(rows[0].at(column), baseline[1].at(column)) << column;
  }
}

// rl.train_also: the other recipes' environments join the training; their resolved
// configs are recorded, so a resume with a changed one is refused.
TEST(TrainCommandTest, TrainsOnSeveralRecipesAndResumesOnlyWithTheSameOnes) {
  nlohmann::json other = nlohmann::json::parse(small_recipe());
  other["name"] = "busier";
  other["rl"]["rate_scales"] = {2.0};
  const fs::path other_path = scenario_in_fresh_dir("train_also_cfg", "busier.json", other.dump());
  nlohmann::json recipe = nlohmann::json::parse(small_recipe());
  recipe["rl"]["train_also"] = {"busier.json"};
  std::ofstream(other_path.parent_path() / "recipe.json") << recipe.dump();
  TrainCommandOptions options;
  options.config_path = (other_path.parent_path() / "recipe.json").string();
  options.out_dir = fresh_dir("train_also").string();
  options.plot = false;
  options.quiet = true;
  CommandRun run = train(options);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const auto config = nlohmann::json::parse(slurp(options.out_dir + "/config.json"));
  EXPECT_EQ(config["rl"]["train_also"], nlohmann::json::array({other_path.string()}));
  const auto inputs = nlohmann::json::parse(slurp(options.out_dir + "/inputs.json"));
  ASSERT_EQ(inputs["train_also"].size(), 1u);
  EXPECT_EQ(inputs["train_also"][0]["name"], "busier");
  // Checkpoints are played on both recipes' validation spans: the baseline's GPU-hours
  // are the sum of each recipe's alone, each from its own tuned size.
  const auto mixed = testing::csv_rows(slurp(options.out_dir + "/validation_baseline.csv"));
  ASSERT_EQ(mixed.size(), 1u);
  // Each recipe held to its own SLO target: the best is pick_per_recipe's choice over
  // each recipe's figures (validation_recipes.csv), which add up to the pooled row's.
  const auto pooled = testing::csv_rows(slurp(options.out_dir + "/validation.csv"));
  const auto per_recipe = testing::csv_rows(slurp(options.out_dir + "/validation_recipes.csv"));
  ASSERT_EQ(pooled.size(), 4u);
  ASSERT_EQ(per_recipe.size(), 8u);
  std::vector<std::vector<rl::Outcome>> candidates(4);
  for (std::size_t i = 0; i < per_recipe.size(); ++i) {
    const std::size_t row = i / 2;
    EXPECT_EQ(per_recipe[i].at("iteration"), pooled[row].at("iteration"));
    EXPECT_EQ(per_recipe[i].at("recipe"), std::to_string(i % 2));
    candidates[row].push_back(testing::outcomes_of({per_recipe[i]}).at(0));
  }
  for (std::size_t row = 0; row < 4; ++row) {
    EXPECT_NEAR(candidates[row][0].gpu_hours + candidates[row][1].gpu_hours, std::stod(pooled[row].at("gpu_hours")),
                2e-6);
  }
  const int best = rl::pick_per_recipe(candidates, {0.99, 0.99});
  for (std::size_t row = 0; row < 4; ++row) {
    EXPECT_EQ(pooled[row].at("best"), static_cast<int>(row) == best ? "1" : "0");
  }
  // Stopped and resumed, it chooses as in one go.
  TrainCommandOptions part = options;
  part.out_dir = fresh_dir("train_also_parts").string();
  part.max_iterations = 1;
  ASSERT_EQ(train(part).code, kExitOk);
  part.resume = true;
  part.max_iterations.reset();
  ASSERT_EQ(train(part).code, kExitOk);
  for (const char* file : {"/validation.csv", "/validation_recipes.csv", "/best/state.json"}) {
    EXPECT_EQ(slurp(part.out_dir + file), slurp(options.out_dir + file)) << file;
  }
  std::vector<std::map<std::string, std::string>> alone;
  for (const fs::path& path : {other_path, other_path.parent_path() / "recipe_alone.json"}) {
    if (path != other_path) std::ofstream(path) << small_recipe();
    TrainCommandOptions single = options;
    single.config_path = path.string();
    single.out_dir = fresh_dir("train_alone_" + path.stem().string()).string();
    ASSERT_EQ(train(single).code, kExitOk);
    alone.push_back(testing::csv_rows(slurp(single.out_dir + "/validation_baseline.csv")).at(0));
  }
  EXPECT_EQ(mixed[0].at("parameter"), alone[1].at("parameter") + "+" + alone[0].at("parameter"));
  EXPECT_NEAR(std::stod(mixed[0].at("gpu_hours")),
              std::stod(alone[0].at("gpu_hours")) + std::stod(alone[1].at("gpu_hours")), 2e-6);

  other["rl"]["rate_scales"] = {3.0};
  std::ofstream(other_path) << other.dump();
  options.resume = true;
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--resume with other inputs"), std::string::npos) << run.err;

  // Refused: a missing recipe, and --trace (one workload for several recipes).
  recipe["rl"]["train_also"] = {"missing.json"};
  std::ofstream(other_path.parent_path() / "recipe.json") << recipe.dump();
  options.resume = false;
  options.out_dir = fresh_dir("train_also_missing").string();
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("rl.train_also"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("missing.json"), std::string::npos) << run.err;
}

TEST(TrainCommandTest, BadOptionsAreRefusedWithTheReason) {
  TrainCommandOptions options;
  options.config_path = scenario_in_fresh_dir("train_bad_cfg", "recipe.json", small_recipe()).string();
  options.out_dir = fresh_dir("train_bad").string();
  options.resume = true;
  CommandRun run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("holds no training to resume"), std::string::npos) << run.err;
  options.resume = false;
  options.seed = "-1";
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--seed"), std::string::npos);
  options.seed.reset();
  options.trace = "/nonexistent/trace.csv";
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("/nonexistent/trace.csv"), std::string::npos) << run.err;
  options.trace.reset();
  // Start-up options refused before any rank waits for another.
  options.world_size = 100000;
  options.rank = 0;
  options.store = "file:///tmp/meshsim-never";
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--world-size 100000: more ranks than rl.ppo.num_envs (2)"), std::string::npos) << run.err;
  options.world_size = 2;
  options.store = "bogus://x";
  run = train(options);
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--store bogus://x: unknown scheme 'bogus'"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists("bogus:"));
  for (const double timeout : {0.0, -1.0, std::nan("")}) {
    options.timeout_s = timeout;
    run = train(options);
    EXPECT_EQ(run.code, kExitBadInput);
    EXPECT_NE(run.err.find("--timeout: expected seconds in (0, 86400]"), std::string::npos) << run.err;
  }
  EXPECT_FALSE(std::filesystem::exists(options.out_dir));  // nothing written for a run that never started
}

}  // namespace
}  // namespace meshsim::cli
