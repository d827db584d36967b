// `meshsim compare-presets`: the default comparison runs without external data, the
// presets really change what happens (HIGH preempts the most batch work, LOW none within
// the batch pool), threads give the results of running one by one, policy files join
// in, and bad input is refused with a clear message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/compare_presets.hpp"

namespace meshsim::cli {
namespace {

using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::slurp;

using Rows = std::map<std::string, std::map<std::string, std::string>>;

// presets.csv by policy, then column.
Rows read_rows(const std::string& csv) {
  Rows rows;
  for (auto& row : testing::csv_rows(csv)) rows[row["policy"]] = std::move(row);
  return rows;
}

struct PresetsRun {
  int code = 0;
  std::string out, err;
  Rows rows;
  std::string dir;  // --out
};

PresetsRun compare(ComparePresetsOptions options, const std::string& name) {
  options.out_dir = fresh_dir(name).string();
  options.plot = false;
  if (!options.until_s) options.until_s = 900;
  std::ostringstream out, err;
  PresetsRun run;
  run.dir = options.out_dir;
  run.code = run_compare_presets_command(options, out, err);
  run.out = out.str();
  run.err = err.str();
  if (run.code == kExitOk) run.rows = read_rows(slurp(options.out_dir + "/presets.csv"));
  return run;
}

double number(const Rows& rows, const std::string& policy, const std::string& column) {
  return std::stod(rows.at(policy).at(column));
}

TEST(ComparePresetsTest, TheDefaultComparisonShowsHowEachPresetTradesBatchWork) {
  const PresetsRun run = compare({}, "presets_default");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  ASSERT_EQ(run.rows.size(), 3u);
  EXPECT_NE(run.out.find("HIGH"), std::string::npos);
  // Same-pool (batch on batch) preemption follows the preset's threshold: HIGH 0.5 lets
  // every higher class preempt a lower one, MEDIUM 1.0 fewer pairs, LOW 3.0 none.
  EXPECT_GT(number(run.rows, "HIGH", "same_pool_preemptions"), number(run.rows, "MEDIUM", "same_pool_preemptions"));
  EXPECT_GT(number(run.rows, "MEDIUM", "same_pool_preemptions"), 0);
  EXPECT_EQ(number(run.rows, "LOW", "same_pool_preemptions"), 0);
  // Serving scale-ups preempt batch work across pools under every preset.
  for (const char* preset : {"HIGH", "MEDIUM", "LOW"}) {
    EXPECT_GT(number(run.rows, preset, "cross_pool_preemptions"), 0) << preset;
    EXPECT_EQ(number(run.rows, preset, "scale_ups_blocked"), 0) << preset;
  }
  // The table shows queued jobs, and each policy's run is a replay's run folder whose
  // summary.json says what presets.csv says.
  EXPECT_NE(run.out.find("jobs done/queued"), std::string::npos) << run.out;
  for (const char* preset : {"HIGH", "MEDIUM", "LOW"}) {
    const auto summary = nlohmann::json::parse(slurp(run.dir + "/" + preset + "/summary.json"));
    EXPECT_EQ(summary["batch"]["jobs"]["queued"].get<double>(), number(run.rows, preset, "jobs_queued")) << preset;
    EXPECT_EQ(summary["batch"]["jobs"]["completed"].get<double>(), number(run.rows, preset, "jobs_completed"));
    const std::string requests = slurp(run.dir + "/" + preset + "/requests.csv");
    EXPECT_EQ(static_cast<std::uint64_t>(std::count(requests.begin(), requests.end(), '\n')),
              summary["requests"]["arrived"].get<std::uint64_t>() + 1);  // a header, then every request
  }
}

TEST(ComparePresetsTest, ThreadsGiveTheResultsOfRunningOneByOne) {
  ComparePresetsOptions options;
  options.presets = {"HIGH", "LOW", "MEDIUM", "critical"};
  options.threads = 1;
  const PresetsRun serial = compare(options, "presets_serial");
  options.threads = 3;
  const PresetsRun threaded = compare(options, "presets_threaded");
  ASSERT_EQ(serial.code, kExitOk) << serial.err;
  ASSERT_EQ(threaded.code, kExitOk) << threaded.err;
  ASSERT_EQ(serial.rows.size(), 4u);
  for (auto [policy, columns] : serial.rows) {
    auto other = threaded.rows.at(policy);
    // Scheduling latency is wall-clock time: the rest must match exactly.
    for (auto* row : {&columns, &other}) {
      row->erase("schedule_p50_us");
      row->erase("schedule_p99_us");
    }
    EXPECT_EQ(columns, other) << policy;
  }
  // "critical" is an alias of HIGH.
  EXPECT_EQ(serial.rows.at("critical").at("same_pool_preemptions"), serial.rows.at("HIGH").at("same_pool_preemptions"));
}

// A run that judged no request has no SLO and no latency: presets.csv leaves them empty
// and the table prints '-' (it printed "SLO met 0.00%  P99 TTFT 0.000s", as if measured).
TEST(ComparePresetsTest, NoFigureIsPrintedOverNoRequest) {
  ComparePresetsOptions options;
  options.presets = {"HIGH", "LOW"};
  options.until_s = 1e-3;
  const PresetsRun run = compare(options, "presets_nothing");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  for (const auto& [policy, columns] : run.rows) {
    EXPECT_EQ(columns.at("slo_attainment"), "") << policy;
    EXPECT_EQ(columns.at("ttft_p99_s"), "") << policy;
  }
  EXPECT_EQ(run.out.find("0.00%"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("0.000s"), std::string::npos) << run.out;
}

// With several seeds, each preset is set against the first seed by seed, counting the
// seeds it did better and worse in, beside the means.
TEST(ComparePresetsTest, SeveralSeedsGetAVerdictPairedBySeed) {
  ComparePresetsOptions options;
  options.presets = {"HIGH", "LOW"};
  options.seeds = 2;
  options.until_s = 600;
  const PresetsRun run = compare(options, "presets_paired");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const auto at = run.out.find("against HIGH, seed by seed\n  LOW: SLO met higher in ");
  ASSERT_NE(at, std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" of 2 seeds (mean ", at), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("lost GPU-h lower in ", at), std::string::npos) << run.out;
}

TEST(ComparePresetsTest, PolicyFilesJoinThePresets) {
  const auto policy = scenario_in_fresh_dir("presets_policy", "no_cross.json",
                                            R"({"name": "no-cross-pool", "preemption_aggressiveness": "HIGH",
                                                "enable_cross_pool_preemption": false})");
  ComparePresetsOptions options;
  options.presets = {"HIGH"};
  options.policy_files = {policy.string()};
  const PresetsRun run = compare(options, "presets_policy_out");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  ASSERT_EQ(run.rows.count("no-cross-pool"), 1u);
  // Serving may no longer take GPUs from batch work: no cross-pool preemption, and
  // scale-ups that found the cluster full are blocked.
  EXPECT_EQ(number(run.rows, "no-cross-pool", "cross_pool_preemptions"), 0);
  EXPECT_GT(number(run.rows, "no-cross-pool", "scale_ups_blocked"), 0);
}

TEST(ComparePresetsTest, BadInputIsRefusedWithAClearMessage) {
  ComparePresetsOptions options;
  options.presets = {"FURIOUS"};
  PresetsRun run = compare(options, "presets_bad_preset");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--presets: 'FURIOUS' is not a preset"), std::string::npos) << run.err;

  ComparePresetsOptions elastic;
  elastic.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/default.json";
  run = compare(elastic, "presets_elastic");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("compare-presets needs a shared cluster"), std::string::npos) << run.err;

  const auto policy = scenario_in_fresh_dir("presets_bad_policy", "bad.json", R"({"same_pool_priority_threshold": -1})");
  ComparePresetsOptions bad_policy;
  bad_policy.policy_files = {policy.string()};
  run = compare(bad_policy, "presets_bad_policy_out");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("bad"), std::string::npos) << run.err;

  // A policy's name is its run folder: one a path could escape from, or two policies of
  // one name, are refused before anything runs.
  const auto escaping = scenario_in_fresh_dir("presets_escaping", "p.json", R"({"name": "../../x"})");
  ComparePresetsOptions bad_name;
  bad_name.policy_files = {escaping.string()};
  run = compare(bad_name, "presets_escaping_out");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("name: expected 1 to 64 letters"), std::string::npos) << run.err;
  const auto twin = scenario_in_fresh_dir("presets_twin", "HIGH.json", R"({"preemption_aggressiveness": "LOW"})");
  ComparePresetsOptions twins;
  twins.presets = {"HIGH"};
  twins.policy_files = {twin.string()};
  run = compare(twins, "presets_twin_out");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("two policies are named 'HIGH'"), std::string::npos) << run.err;
  // A policy protecting a pool the cluster does not have protects nothing: refused.
  const auto typo = scenario_in_fresh_dir("presets_typo", "typo.json", R"({"protected_pools": ["servng"]})");
  ComparePresetsOptions typo_policy;
  typo_policy.policy_files = {typo.string()};
  run = compare(typo_policy, "presets_typo_out");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("'servng' is no pool of this cluster"), std::string::npos) << run.err;
  ComparePresetsOptions no_seeds;
  no_seeds.seeds = 0;
  run = compare(no_seeds, "presets_no_seeds");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--seeds: expected a number of seeds in [1, 1000], got 0"), std::string::npos) << run.err;
}

// Seed 000's RLHF roles share one pool: rollout (serving) sits between the batch classes,
// so the presets' same-pool thresholds decide what a rollout scale-up may preempt, and
// the serving side's figures differ by preset, over several seeds.
// Classes of service on the RLHF roles: each preset's runs judge each class by its own SLO,
// and the comparison reports every class per policy (classes.csv, a table section).
TEST(ComparePresetsTest, WithClassesOfServiceEachPresetReportsEveryClass) {
  ComparePresetsOptions options;
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/rlhf-roles.json";
  options.presets = {"HIGH", "LOW"};
  options.until_s = 1200;
  options.sets = {R"(classes=[{"name": "policy", "priority": 0, "share": 0.5},
                              {"name": "critic", "priority": 1, "share": 0.5, "slo": {"ttft_ms": 5000}}])",
                  "serving.vllm.scheduling_policy=priority"};
  const PresetsRun run = compare(options, "presets_classes");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const auto rows = testing::csv_rows(slurp(run.dir + "/classes.csv"));
  ASSERT_EQ(rows.size(), 4u);  // 2 policies x 2 classes
  std::map<std::string, std::set<std::string>> classes_of;
  for (const auto& row : rows) {
    classes_of[row.at("policy")].insert(row.at("class"));
    const double met = std::stod(row.at("slo_attainment"));
    EXPECT_GE(met, 0.0);
    EXPECT_LE(met, 1.0);
  }
  EXPECT_EQ(classes_of["HIGH"], (std::set<std::string>{"policy", "critic"}));
  EXPECT_EQ(classes_of["LOW"], (std::set<std::string>{"policy", "critic"}));
  EXPECT_NE(run.out.find("SLO met by class of service"), std::string::npos) << run.out;
  // Each run's summary has its classes.
  const auto summary = nlohmann::json::parse(slurp(run.dir + "/HIGH/summary.json"));
  EXPECT_EQ(summary["classes"].size(), 2u);
}

TEST(ComparePresetsTest, OnTheRlhfRolesThePresetsChangeWhatServingGets) {
  ComparePresetsOptions options;
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/rlhf-roles.json";
  options.presets = {"HIGH", "LOW"};
  options.seeds = 2;
  options.until_s = 3600;
  const PresetsRun run = compare(options, "presets_rlhf");
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const auto rows = testing::csv_rows(slurp(run.dir + "/presets.csv"));
  ASSERT_EQ(rows.size(), 4u);  // 2 policies x 2 seeds, policy by policy
  EXPECT_EQ(rows[0].at("policy") + rows[0].at("seed") + rows[1].at("seed"), "HIGH78");
  std::map<std::string, double> slo, ttft, blocked;
  for (const auto& row : rows) {
    slo[row.at("policy")] += std::stod(row.at("slo_attainment")) / 2;
    ttft[row.at("policy")] += std::stod(row.at("ttft_p99_s")) / 2;
    blocked[row.at("policy")] += std::stod(row.at("scale_ups_blocked")) / 2;
  }
  // HIGH lets rollout preempt evaluation and data jobs, LOW neither: fewer blocked
  // scale-ups, a shorter P99 TTFT and a higher SLO attainment under HIGH.
  EXPECT_LT(blocked["HIGH"], blocked["LOW"]);
  EXPECT_LT(ttft["HIGH"], ttft["LOW"]);
  EXPECT_GT(slo["HIGH"], slo["LOW"] + 0.005);
  // Who preempted whom, by class: serving only under HIGH, and only classes below it.
  std::map<std::string, std::set<std::string>> serving_victims;
  std::uint64_t train_on_reward = 0;
  for (const auto& row : testing::csv_rows(slurp(run.dir + "/preemptions.csv"))) {
    if (row.at("preemptor") == "serving") serving_victims[row.at("policy")].insert(row.at("victim"));
    if (row.at("preemptor") == "train" && row.at("victim") == "reward") train_on_reward += std::stoull(row.at("preemptions"));
    EXPECT_NE(row.at("victim"), "serving") << "a serving instance is never a victim";
  }
  EXPECT_EQ(serving_victims["LOW"].size(), 0u);
  EXPECT_EQ(serving_victims["HIGH"], (std::set<std::string>{"data", "eval"}));
  EXPECT_GT(train_on_reward, 0u);  // by the label rule, under either preset
  // The table gives means, the spread over the seeds and who preempted whom; each run
  // has its own folder.
  EXPECT_NE(run.out.find("means over 2 seeds"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("spread over the seeds"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("who preempted whom"), std::string::npos) << run.out;
  for (const char* folder : {"/HIGH/seed-7", "/HIGH/seed-8", "/LOW/seed-7", "/LOW/seed-8"}) {
    EXPECT_TRUE(std::filesystem::exists(run.dir + folder + "/summary.json")) << folder;
  }
}

}  // namespace
}  // namespace meshsim::cli
