// `meshsim sweep GRID`: the grid's runs in order, each run folder the same as `meshsim
// replay` of that config, the CSV byte-identical whatever the number of threads, an
// existing sweep never overwritten (and --resume keeping its finished runs), bad grids
// refused naming the file, run and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "configs/config_file.hpp"
#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "tests/local_http.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/sweep_command.hpp"
#include "tools/runs/sweep_plan.hpp"

namespace meshsim::cli {
namespace {

using testing::csv_rows;
using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::slurp;
namespace fs = std::filesystem;

// Three rate scales x two start sizes x two seeds of the default scenario, ten minutes each.
const std::string kGrid = R"({
  "comment": "sweep test",
  "grid": {"workload.rate_scale": [0.5, 1, 2], "serving.start_state.0.count": [2, 4]},
  "list": [{"run.until_s": 600}],
  "seeds": [1, 2]
})";

testing::CommandRun sweep(const fs::path& grid, const fs::path& out_dir, unsigned threads, bool resume = false,
                          std::optional<std::string> metrics_listen = std::nullopt,
                          std::vector<std::string> sets = {}) {
  SweepCommandOptions options;
  options.sets = std::move(sets);
  options.grid = grid.string();
  options.out_dir = out_dir.string();
  options.threads = threads;
  options.resume = resume;
  options.metrics_listen = std::move(metrics_listen);
  std::ostringstream out, err;
  const int code = run_sweep_command(options, out, err);
  return {code, out.str(), err.str()};
}

TEST(SweepCommandTest, EveryRunOfTheGridInOrderTheSameWithAnyThreads) {
  const auto grid = scenario_in_fresh_dir("sweep_grid", "grid.json", kGrid);
  const auto one = fresh_dir("sweep_one"), three = fresh_dir("sweep_three");
  ASSERT_EQ(sweep(grid, one, 1).code, kExitOk);
  const auto swept = sweep(grid, three, 3);
  ASSERT_EQ(swept.code, kExitOk) << swept.err;
  EXPECT_NE(swept.out.find("12 runs (0 resumed, 0 failed)"), std::string::npos) << swept.out;
  const std::string csv = slurp(one / "sweep.csv");
  EXPECT_EQ(csv, slurp(three / "sweep.csv"));
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 12u);
  // Seeds vary fastest, then the grid's keys (in key order), then the list.
  EXPECT_EQ(rows[0].at("seed"), "1");
  EXPECT_EQ(rows[1].at("seed"), "2");
  EXPECT_EQ(rows[0].at("serving.start_state.0.count"), "2");
  EXPECT_EQ(rows[0].at("workload.rate_scale"), "0.5");
  EXPECT_EQ(rows[2].at("workload.rate_scale"), "1");
  EXPECT_EQ(rows[6].at("serving.start_state.0.count"), "4");
  EXPECT_EQ(rows[11].at("run.until_s"), "600");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("run"), std::to_string(i));
    EXPECT_EQ(rows[i].at("status"), "ok");
    // The counts add up in every row.
    EXPECT_EQ(std::stoul(rows[i].at("arrived")),
              std::stoul(rows[i].at("completed")) + std::stoul(rows[i].at("dropped")) +
                  std::stoul(rows[i].at("in_flight")));
  }
  // Twice the rate, about twice the arrivals.
  EXPECT_GT(std::stod(rows[4].at("arrived")), 1.7 * std::stod(rows[0].at("arrived")));

  // Run 5 (rate 2, 2 instances, seed 2) is `meshsim replay` of that config, byte for byte.
  const auto config = scenario_in_fresh_dir("sweep_config", "config.json", "{}");
  auto scenario = nlohmann::json::parse(slurp(configs::default_scenario_path()));
  scenario["workload"]["generator"] = (fs::path(configs::default_scenario_path()).parent_path() /
                                       scenario["workload"]["generator"].get<std::string>()).string();
  scenario["workload"]["rate_scale"] = 2;
  scenario["serving"]["start_state"][0]["count"] = 2;
  scenario["run"]["until_s"] = 600;
  scenario["seed"] = 2;
  std::ofstream(config) << scenario.dump();
  ReplayCommandOptions replay;
  replay.config_path = config.string();
  replay.out_dir = fresh_dir("sweep_replay").string();
  replay.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(replay, out, err), kExitOk) << err.str();
  for (const char* file : {"requests.csv", "timeseries.csv"}) {
    EXPECT_EQ(slurp(one / "runs/0005" / file), slurp(fs::path(replay.out_dir) / file)) << file;
  }
  auto swept_summary = nlohmann::json::parse(slurp(one / "runs/0005/summary.json"));
  auto replayed_summary = nlohmann::json::parse(slurp(fs::path(replay.out_dir) / "summary.json"));
  EXPECT_EQ(swept_summary["requests"], replayed_summary["requests"]);
  EXPECT_EQ(swept_summary["latency_s"], replayed_summary["latency_s"]);
  EXPECT_EQ(swept_summary["cost"], replayed_summary["cost"]);
}

TEST(SweepCommandTest, AnExistingSweepIsNeverOverwrittenAndResumeKeepsFinishedRuns) {
  const auto grid = scenario_in_fresh_dir("sweep_resume_grid", "grid.json", kGrid);
  const auto out = fresh_dir("sweep_resume");
  ASSERT_EQ(sweep(grid, out, 2).code, kExitOk);
  const std::string csv = slurp(out / "sweep.csv");
  const std::string kept = slurp(out / "runs/0000/requests.csv");

  const auto again = sweep(grid, out, 2);
  EXPECT_EQ(again.code, kExitOutputError);
  EXPECT_NE(again.err.find("holds a sweep already: pass --resume"), std::string::npos) << again.err;

  // A sweep cut short: two runs never finished.
  fs::remove_all(out / "runs/0003");
  fs::remove(out / "runs/0007/summary.json");
  fs::remove(out / "sweep.csv");
  const auto resumed = sweep(grid, out, 2, true);
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_NE(resumed.out.find("12 runs (10 resumed, 0 failed)"), std::string::npos) << resumed.out;
  EXPECT_EQ(slurp(out / "sweep.csv"), csv);
  EXPECT_EQ(slurp(out / "runs/0000/requests.csv"), kept);

  // Another grid into the same folder, even with --resume, is refused.
  const auto other = scenario_in_fresh_dir("sweep_other_grid", "grid.json", R"({"seeds": [9]})");
  const auto refused = sweep(other, out, 1, true);
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_NE(refused.err.find("holds a sweep of other runs"), std::string::npos) << refused.err;

  // A folder with anything else in it is not a sweep's.
  const auto busy = fresh_dir("sweep_busy");
  fs::create_directories(busy);
  std::ofstream(busy / "notes.txt") << "mine";
  const auto busy_run = sweep(grid, busy, 1);
  EXPECT_EQ(busy_run.code, kExitOutputError);
  EXPECT_NE(busy_run.err.find("not empty"), std::string::npos) << busy_run.err;
  EXPECT_EQ(slurp(busy / "notes.txt"), "mine");
}

TEST(SweepCommandTest, AResumeFedOtherInputsIsRefusedAndADamagedSummaryIsAFailedRun) {
  nlohmann::json scenario = nlohmann::json::parse(slurp(configs::default_scenario_path()));
  scenario["run"]["until_s"] = 60;
  const fs::path bundled = fs::path(configs::default_scenario_path()).parent_path();
  scenario["workload"]["generator"] = (bundled / scenario["workload"]["generator"].get<std::string>()).string();
  const auto grid = scenario_in_fresh_dir("sweep_inputs_grid", "grid.json",
                                          R"({"config": "scenario.json", "seeds": [1, 2]})");
  const fs::path scenario_file = grid.parent_path() / "scenario.json";
  std::ofstream(scenario_file) << scenario.dump();
  const auto out = fresh_dir("sweep_inputs");
  const auto first = sweep(grid, out, 1);
  ASSERT_EQ(first.code, kExitOk) << first.err;
  const std::string csv = slurp(out / "sweep.csv");

  scenario["run"]["until_s"] = 61;  // the grid's scenario edited after the sweep started
  std::ofstream(scenario_file) << scenario.dump();
  const auto refused = sweep(grid, out, 1, true);
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_NE(refused.err.find("--resume with other inputs than the run was started with "
                             "(scenario.run.until_s: was 60, now 61)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(out / "sweep.csv"), csv);

  scenario["run"]["until_s"] = 60;
  std::ofstream(scenario_file) << scenario.dump();
  std::ofstream(out / "runs/0001/summary.json") << "{}";
  const auto damaged = sweep(grid, out, 1, true);
  EXPECT_EQ(damaged.code, kExitBadInput);
  EXPECT_NE(damaged.err.find("runs/0001/summary.json: /requests/arrived: expected a number (remove the run's "
                             "folder to run it again)"),
            std::string::npos)
      << damaged.err;
  const auto rows = csv_rows(slurp(out / "sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status").rfind("error: ", 0), 0u) << rows[1].at("status");

  // A finished run's folder is trusted only as a run could have left it: each damage below
  // (figures no run writes, a file gone, rows lost) is a failed run naming the file, never a
  // row of sweep.csv (an attainment of 5 used to enter it; a run without requests.csv was ok).
  const fs::path run = out / "runs/0000";
  const std::string summary_text = slurp(run / "summary.json"), requests_text = slurp(run / "requests.csv"),
                    timeseries_text = slurp(run / "timeseries.csv");
  const auto damage = [&](const std::function<void()>& edit, const std::string& expected) {
    edit();
    const auto resumed = sweep(grid, out, 1, true);
    EXPECT_EQ(resumed.code, kExitBadInput) << expected;
    EXPECT_NE(resumed.err.find("runs/0000/" + expected), std::string::npos) << resumed.err;
    std::ofstream(run / "summary.json") << summary_text;
    std::ofstream(run / "requests.csv") << requests_text;
    std::ofstream(run / "timeseries.csv") << timeseries_text;
  };
  const auto edited = [&](const std::string& pointer, const nlohmann::json& value) {
    return [&, pointer, value] {
      auto summary = nlohmann::json::parse(summary_text);
      summary[nlohmann::json::json_pointer(pointer)] = value;
      std::ofstream(run / "summary.json") << summary.dump();
    };
  };
  damage(edited("/slo/attainment", 5), "summary.json: /slo/attainment: expected a share in [0, 1], got 5");
  damage(edited("/slo/attainment", -0.5), "summary.json: /slo/attainment: expected a share in [0, 1]");
  damage(edited("/latency_s/ttft/p99", -1), "summary.json: /latency_s/ttft/p99: expected a finite number >= 0");
  damage(edited("/requests/completed", 1.5), "summary.json: /requests/completed: expected a whole count >= 0");
  // Whole and consistent, but another run's: its seed or resolved config is not this run's
  // (another replay into the folder, or an edit).
  damage(edited("/seed", 999), "summary.json: seed: expected this run's 1, got 999");
  damage(edited("/config/run/until_s", 120), "summary.json: config.run.until_s: was 60.0, now 120");
  damage(edited("/config/seed", 2), "summary.json: config.seed: was 1, now 2");
  damage([&] { fs::remove(run / "requests.csv"); }, "requests.csv: missing beside summary.json");
  damage([&] { fs::remove(run / "timeseries.csv"); }, "timeseries.csv: missing beside summary.json");
  damage([&] { std::ofstream(run / "requests.csv") << requests_text.substr(0, requests_text.rfind('\n', requests_text.size() - 2) + 1); },
         "requests.csv: expected a header and ");
  // A damaged record of the sweep itself is refused, whatever it holds.
  const std::string record = slurp(out / "sweep.json");
  for (const std::string text : {"", "garbage", "[]", "null"}) {
    std::ofstream(out / "sweep.json") << text;
    const auto refused_record = sweep(grid, out, 1, true);
    EXPECT_EQ(refused_record.code, kExitBadInput) << text;
    EXPECT_NE(refused_record.err.find("sweep.json: not a sweep's record"), std::string::npos) << refused_record.err;
  }
  std::ofstream(out / "sweep.json") << record;
  fs::remove_all(out / "runs/0001");  // the damaged run above, run again
  const auto whole = sweep(grid, out, 1, true);
  EXPECT_EQ(whole.code, kExitOk) << whole.err;
  EXPECT_EQ(slurp(out / "sweep.csv"), csv);
}

// --set changes the base scenario of every run, as a grid key with one value would; a
// grid key it also sets wins; a resume with other --set values is refused; a bad --set is
// named.
TEST(SweepCommandTest, SetChangesTheBaseOfEveryRunAndAKeyTheGridSetsAgainIsRefused) {
  const auto grid = scenario_in_fresh_dir("sweep_set_grid", "grid.json",
                                          R"({"grid": {"serving.start_state.0.count": [2, 3]},
                                              "list": [{"run.until_s": 120}], "seeds": [1]})");
  const auto as_grid = scenario_in_fresh_dir("sweep_set_as_grid", "grid.json",
                                             R"({"grid": {"serving.start_state.0.count": [2, 3]},
                                                 "list": [{"run.until_s": 120, "workload.rate_scale": 2}],
                                                 "seeds": [1]})");
  const auto out = fresh_dir("sweep_set"), out_grid = fresh_dir("sweep_set_as_grid_out");
  // The list sets run.until_s in every run: a --set of it would never be played.
  const auto unused = sweep(grid, fresh_dir("sweep_set_unused"), 1, false, std::nullopt, {"run.until_s=60"});
  EXPECT_EQ(unused.code, kExitBadInput);
  EXPECT_NE(unused.err.find("--set run.until_s: " + grid.string() + ": list[0].run.until_s sets it again in every run"),
            std::string::npos)
      << unused.err;
  const auto with_set = sweep(grid, out, 1, false, std::nullopt, {"workload.rate_scale=2"});
  ASSERT_EQ(with_set.code, kExitOk) << with_set.err;
  ASSERT_EQ(sweep(as_grid, out_grid, 1).code, kExitOk);
  for (const char* run : {"runs/0000", "runs/0001"}) {
    // The same requests and outputs as the grid's own override.
    EXPECT_EQ(slurp(out / run / "requests.csv"), slurp(out_grid / run / "requests.csv")) << run;
  }
  const auto rows = csv_rows(slurp(out / "sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("serving.start_state.0.count"), "3");
  // A resume must be fed the same --set.
  const auto other = sweep(grid, out, 1, true, std::nullopt, {"workload.rate_scale=3"});
  EXPECT_EQ(other.code, kExitBadInput);
  EXPECT_NE(other.err.find("holds a sweep of other runs"), std::string::npos) << other.err;
  const auto same = sweep(grid, out, 1, true, std::nullopt, {"workload.rate_scale=2"});
  EXPECT_EQ(same.code, kExitOk) << same.err;
  const auto bad = sweep(grid, fresh_dir("sweep_bad_set"), 1, false, std::nullopt, {"workload.rate_scale"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--set: "), std::string::npos) << bad.err;
  const auto unknown = sweep(grid, fresh_dir("sweep_unknown_set"), 1, false, std::nullopt, {"workload.rate_scal=2"});
  EXPECT_EQ(unknown.code, kExitBadInput);
  EXPECT_NE(unknown.err.find("rate_scal"), std::string::npos) << unknown.err;
}

TEST(SweepCommandTest, ARunSummaryIsReadBackOnlyWhenItsCountsAddUp) {
  nlohmann::json summary = {{"requests", {{"arrived", 10}, {"completed", 7}, {"dropped", 2}, {"in_flight", 1}}},
                            {"slo", {{"attainment", 0.9}}},
                            {"throughput", {{"completed_per_s", 1.5}}},
                            {"cost", {{"gpu_hours", 2.0}, {"usd", 8.0}}}};
  for (const char* metric : {"ttft", "tbt", "e2e"}) summary["latency_s"][metric] = {{"p50", 0.1}, {"p99", 0.2}};
  EXPECT_TRUE(read_sweep_run_summary(summary.dump(), "s.json"));  // no scaling section: a fixed-size run
  summary["requests"]["dropped"] = 3;
  EXPECT_EQ(read_sweep_run_summary(summary.dump(), "s.json").error().message,
            "s.json: /requests: expected arrived = completed + dropped + in_flight");
  summary["requests"]["dropped"] = "2";
  EXPECT_EQ(read_sweep_run_summary(summary.dump(), "s.json").error().message, "s.json: /requests/dropped: expected a whole count >= 0, got \"2\"");
  EXPECT_EQ(read_sweep_run_summary("[1]", "s.json").error().message, "s.json: expected a run's summary object");
}

TEST(SweepCommandTest, LiveMetricsCountTheRunsFinished) {
  // 24 runs of an hour each on one thread: over a second, scraped as it goes.
  const auto grid = scenario_in_fresh_dir("sweep_metrics_grid", "grid.json", R"({
    "grid": {"workload.rate_scale": [2, 4, 8], "serving.start_state.0.count": [4, 8]},
    "list": [{"run.until_s": 3600}], "seeds": [1, 2, 3, 4]})");
  const int port = meshsim::testing::free_port();
  testing::CommandRun run;
  const std::string seen = meshsim::testing::scrape_while(
      port, "meshsim_sweep_runs_finished_total{outcome=\"ran\"} 1\n",
      [&] { run = sweep(grid, fresh_dir("sweep_metrics"), 1, false, std::to_string(port)); });
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(seen.find("\nmeshsim_sweep_runs 24\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("meshsim_sweep_runs_finished_total{outcome=\"ran\"} 1\n"), std::string::npos) << seen;
  const auto refused = sweep(grid, fresh_dir("sweep_metrics_bad"), 1, false, "99999");
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_NE(refused.err.find("--metrics-port 99999: expected PORT or HOST:PORT"), std::string::npos) << refused.err;
}

// The plan builds run i from its index alone (it never holds its runs). A slow twin
// enumerates the runs with nested loops, as the grid's definition reads: list entries,
// then the grid's keys in key order (the last varying fastest), traces, seeds. On random
// grids the two agree run by run: the overrides, and in the resolved config the name,
// rate scale and seed (from the seeds list or a "seed" override, never both; the grid
// beating the list).
TEST(SweepPlanTest, RunIOfARandomGridIsTheIthRunOfTheNestedLoops) {
  using nlohmann::json;
  const auto base = configs::load_scenario(configs::default_scenario_path());
  ASSERT_TRUE(base);
  std::mt19937_64 rng(2026);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<std::string> keys = {"name", "seed", "workload.rate_scale"};
  const auto value_of = [&](const std::string& key) -> json {
    if (key == "name") return "n" + std::to_string(pick(50));
    if (key == "seed") return pick(1000);
    return 0.25 * static_cast<double>(1 + pick(8));
  };
  for (int trial = 0; trial < 25; ++trial) {
    json grid = json::object();
    json list = json::array();
    const bool with_seeds = pick(2);  // a seeds list, or "seed" overrides: one place only
    const auto used = [&](const std::string& key) { return !(with_seeds && key == "seed") && pick(2); };
    // A key is the list's or the grid's: the grid's would override the list's in every run.
    std::vector<std::string> list_keys, grid_keys;
    for (const auto& key : keys) (pick(2) ? list_keys : grid_keys).push_back(key);
    for (std::size_t i = 0, n = 1 + pick(3); i < n; ++i) {
      json entry = json::object();
      for (const auto& key : list_keys) {
        if (used(key)) entry[key] = value_of(key);
      }
      list.push_back(entry);
    }
    if (pick(2)) grid["list"] = list;
    else list = json::array({json::object()});
    json axes = json::object();
    for (const auto& key : grid_keys) {
      if (!used(key)) continue;
      for (std::size_t i = 0, n = 1 + pick(4); i < n; ++i) axes[key].push_back(value_of(key));
    }
    if (!axes.empty()) grid["grid"] = axes;
    json seeds = json::array({nullptr});
    if (with_seeds) {
      seeds = json::array();
      for (std::size_t i = 0, n = 1 + pick(3); i < n; ++i) seeds.push_back(pick(2) ? json(pick(100)) : json());
      grid["seeds"] = seeds;
    }
    const std::size_t traces = 1 + pick(2);
    if (traces > 1) grid["traces"] = json::array({nullptr, nullptr});

    // The slow twin: every run's overrides and seed entry, in order.
    std::vector<std::pair<std::vector<configs::Override>, json>> twin;
    std::vector<configs::Override> chosen;
    std::vector<std::pair<std::string, json>> axis_list;
    for (const auto& [key, values] : axes.items()) axis_list.emplace_back(key, values);
    const std::function<void(std::size_t)> product = [&](std::size_t axis) {
      if (axis == axis_list.size()) {
        for (std::size_t t = 0; t < traces; ++t) {
          for (const json& seed : seeds) twin.emplace_back(chosen, seed);
        }
        return;
      }
      for (const json& value : axis_list[axis].second) {
        chosen.push_back({axis_list[axis].first, value});
        product(axis + 1);
        chosen.pop_back();
      }
    };
    for (const json& entry : list) {
      chosen.clear();
      for (const auto& [key, value] : entry.items()) chosen.push_back({key, value});
      product(0);
    }

    const auto file = scenario_in_fresh_dir("sweep_plan_twin", "grid.json", grid.dump());
    const auto plan = read_sweep_plan(file.string(), std::nullopt);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_EQ(plan->size(), twin.size()) << grid;
    for (std::size_t i = 0; i < twin.size(); ++i) {
      const SweepRun run = plan->run(i);
      const auto& [overrides, seed] = twin[i];
      ASSERT_EQ(run.overrides.size(), overrides.size()) << grid << " run " << i;
      json name = base->name, rate = base->workload.rate_scale, expected_seed = base->seed;
      for (std::size_t k = 0; k < overrides.size(); ++k) {
        EXPECT_EQ(run.overrides[k].path, overrides[k].path) << grid << " run " << i;
        EXPECT_EQ(run.overrides[k].value, overrides[k].value) << grid << " run " << i;
        (overrides[k].path == "name" ? name : overrides[k].path == "seed" ? expected_seed : rate) = overrides[k].value;
      }
      if (!seed.is_null()) expected_seed = seed;
      const auto config = plan->config_of(run);
      ASSERT_TRUE(config) << config.error().message;
      EXPECT_EQ(json(config->name), name) << grid << " run " << i;
      EXPECT_EQ(json(config->workload.rate_scale), rate) << grid << " run " << i;
      EXPECT_EQ(json(config->seed), expected_seed) << grid << " run " << i;
    }
  }
}

// Every value a grid file or --set gives is played in some run, or the plan is refused:
// random grids of keys that overlap ("slo" holds "slo.ttft_ms") against a slow twin that
// applies each run's overrides to the scenario's tree and looks for each value given.
TEST(SweepPlanTest, AGridIsRefusedExactlyWhenOneOfItsValuesWouldNeverBePlayed) {
  using nlohmann::json;
  const auto base = configs::read_config_file(configs::default_scenario_path());
  ASSERT_TRUE(base);
  std::mt19937_64 rng(57);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<std::string> keys = {"name",         "slo",           "slo.ttft_ms", "slo.tbt_ms",
                                         "serving.vllm", "serving.vllm.max_num_seqs", "status"};
  int counter = 0, refused = 0, accepted = 0;
  // Unique values (none equal to the scenario's own), so that finding one in a run's tree
  // means it was played.
  const auto value_of = [&](const std::string& key) -> json {
    const int c = ++counter % 90;
    if (key == "name") return "n" + std::to_string(counter);
    if (key == "slo") return {{"ttft_ms", 500 + c}};
    if (key == "slo.ttft_ms") return 500 + c;
    if (key == "slo.tbt_ms") return 200 + c;
    if (key == "serving.vllm") return {{"max_num_seqs", 100 + c}};
    if (key == "serving.vllm.max_num_seqs") return 100 + c;
    return 1;
  };
  // The (path, value) leaves a value sets.
  const std::function<void(const std::string&, const json&, std::vector<std::pair<std::string, json>>&)> leaves =
      [&](const std::string& path, const json& value, std::vector<std::pair<std::string, json>>& out) {
        if (!value.is_object()) {
          out.emplace_back(path, value);
          return;
        }
        for (const auto& [k, v] : value.items()) leaves(path + "." + k, v, out);
      };
  const auto played_in = [](const json& tree, const std::vector<std::pair<std::string, json>>& given) {
    for (const auto& [path, value] : given) {
      std::string pointer = "/" + path;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      if (tree.contains(json::json_pointer(pointer)) && tree.at(json::json_pointer(pointer)) == value) return true;
    }
    return false;
  };
  for (int trial = 0; trial < 300; ++trial) {
    json grid = json::object();
    std::vector<configs::Override> sets;
    for (std::size_t i = 0, n = pick(3); i < n; ++i) {
      const std::string& key = keys[pick(keys.size() - 1)];
      sets.push_back({key, value_of(key)});
    }
    json list = json::array();
    for (std::size_t i = 0, n = 1 + pick(2); i < n; ++i) {
      json entry = json::object();
      for (std::size_t k = 0, m = pick(3); k < m; ++k) {
        const std::string& key = keys[pick(keys.size())];
        entry[key] = value_of(key);
      }
      list.push_back(entry);
    }
    grid["list"] = list;
    json axes = json::object();
    for (std::size_t k = 0, m = pick(3); k < m; ++k) {
      const std::string& key = keys[pick(keys.size())];
      axes[key] = json::array();
      for (std::size_t v = 0, n = 1 + pick(2); v < n; ++v) axes[key].push_back(value_of(key));
    }
    if (!axes.empty()) grid["grid"] = axes;

    // The twin: every run's tree, and whether each given value shows in one of them.
    bool column_clash = false;
    for (const json& entry : list) {
      for (const auto& [key, value] : entry.items()) column_clash |= key == "status";
    }
    for (const auto& [key, values] : axes.items()) column_clash |= key == "status";
    std::vector<std::vector<std::pair<std::string, json>>> given;  // sets, list entries' keys, grid values
    std::vector<bool> played;
    const auto add = [&](const std::string& path, const json& value) {
      given.emplace_back();
      leaves(path, value, given.back());
      played.push_back(false);
      return given.size() - 1;
    };
    std::vector<std::size_t> set_ids;
    for (const auto& o : sets) set_ids.push_back(add(o.path, o.value));
    std::vector<std::pair<std::string, std::vector<std::size_t>>> axis_ids;
    for (const auto& [key, values] : axes.items()) {
      axis_ids.emplace_back(key, std::vector<std::size_t>{});
      for (const json& v : values) axis_ids.back().second.push_back(add(key, v));
    }
    for (const json& entry : list) {
      std::vector<std::pair<std::size_t, configs::Override>> entry_ids;
      for (const auto& [key, value] : entry.items()) entry_ids.push_back({add(key, value), {key, value}});
      const std::function<void(std::size_t, json)> runs = [&](std::size_t a, json tree) {
        if (a == axis_ids.size()) {
          for (std::size_t id = 0; id < given.size(); ++id) played[id] = played[id] || played_in(tree, given[id]);
          return;
        }
        const auto& values = axes[axis_ids[a].first];
        for (std::size_t v = 0; v < values.size(); ++v) {
          json next = tree;
          ASSERT_TRUE(configs::apply_override(next, {axis_ids[a].first, values[v]}));
          runs(a + 1, next);
        }
      };
      json tree = *base;
      for (const auto& o : sets) ASSERT_TRUE(configs::apply_override(tree, o));
      for (const auto& [id, o] : entry_ids) ASSERT_TRUE(configs::apply_override(tree, o));
      runs(0, tree);
    }
    // A grid key is played when one of its values is.
    bool all_played = true;
    std::vector<bool> is_axis_value(given.size(), false);
    for (const auto& [key, ids] : axis_ids) {
      all_played &= std::any_of(ids.begin(), ids.end(), [&](std::size_t id) { return played[id]; });
      for (std::size_t id : ids) is_axis_value[id] = true;
    }
    for (std::size_t id = 0; id < given.size(); ++id) all_played &= is_axis_value[id] || played[id];

    const auto file = scenario_in_fresh_dir("sweep_plan_used", "grid.json", grid.dump());
    std::vector<std::string> set_texts;
    for (const auto& o : sets) set_texts.push_back(o.path + "=" + o.value.dump());
    const auto plan = read_sweep_plan(file.string(), std::nullopt, set_texts);
    const bool expected = all_played && !column_clash;
    ASSERT_EQ(static_cast<bool>(plan), expected)
        << grid << " with --set " << json(set_texts) << (plan ? "" : ": " + plan.error().message);
    (plan ? accepted : refused) += 1;
  }
  // Both answers were exercised.
  EXPECT_GT(accepted, 50);
  EXPECT_GT(refused, 50);
}

TEST(SweepCommandTest, BadGridsAreRefusedNamingTheFileRunAndKey) {
  const auto expect_error = [](const std::string& text, const std::string& fragment) {
    const auto grid = scenario_in_fresh_dir("sweep_bad", "grid.json", text);
    const auto out = fresh_dir("sweep_bad_out");
    const auto s = sweep(grid, out, 1);
    EXPECT_EQ(s.code, kExitBadInput) << text;
    EXPECT_NE(s.err.find(fragment), std::string::npos) << s.err;
    EXPECT_NE(s.err.find("grid.json"), std::string::npos) << s.err;
    EXPECT_FALSE(fs::exists(out)) << "nothing is written for a bad grid";
  };
  expect_error(R"({"grids": {}})", "grids: unknown key");
  expect_error(R"({"grid": {"workload.rate_scale": []}})", "grid.workload.rate_scale: expected a non-empty list");
  expect_error(R"({"grid": {"workload.rate_scale": [1, "fast"]}})", "run 1: ");
  expect_error(R"({"grid": {"workload.rate_scale": [1, "fast"]}})", "rate_scale");
  expect_error(R"({"seeds": [-1]})", "seeds[0]: expected an integer");
  expect_error(R"({"grid": {"serving.start_state.0.count": [2, null]}})",
               "grid.serving.start_state.0.count[1]: null is not a value");
  expect_error(R"({"list": [{"run.until_s": null}]})", "list[0].run.until_s: null is not a value");
  expect_error(R"({"grid": {"seed": [1, 2]}, "seeds": [3]})", "grid.seed: give the seeds in one place");
  expect_error(R"({"list": [{"seed": 1}], "seeds": [3]})", "list.seed: give the seeds in one place");
  expect_error(R"({"traces": ["missing.csv"]})", "missing.csv: no such trace file");
  expect_error(R"({"config": "missing.json"})", "missing.json");
  // Every run checked against its catalog before the first starts, not when it starts.
  expect_error(R"({"grid": {"serving.tensor_parallel": [4, 3, 2]}})",
               "run 1: " + configs::default_scenario_path() + ": serving.tensor_parallel: 3 does not divide");
  expect_error(R"({"grid": {"seed": [1, 2], "status": [1]}})", "grid.status: sweep.csv's status column is its own");
  // Too many runs: refused at once, before a config is resolved (10^6 took 73 s and exited
  // on bad_alloc).
  nlohmann::json huge = {{"grid", {{"workload.rate_scale", std::vector<int>(1000, 1)},
                                   {"serving.start_state.0.count", std::vector<int>(1000, 2)}}}};
  expect_error(huge.dump(), "the grid makes more than 50000 runs: split it into several sweeps");
  nlohmann::json many = {{"grid", {{"workload.rate_scale", std::vector<int>(200, 1)}}}};
  many["seeds"] = std::vector<int>(300, 1);
  expect_error(many.dump(), "the grid makes 60000 runs, more than 50000: split it into several sweeps");
  // More runs at a time than the interrupt handler can clean up after.
  const auto grid = scenario_in_fresh_dir("sweep_threads", "grid.json", R"({"seeds": [1]})");
  const auto threads = sweep(grid, fresh_dir("sweep_threads_out"), 1000);
  EXPECT_EQ(threads.code, kExitBadInput);
  EXPECT_NE(threads.err.find("--threads: expected 0 (one per core) to 256, got 1000"), std::string::npos) << threads.err;
}

}  // namespace
}  // namespace meshsim::cli
