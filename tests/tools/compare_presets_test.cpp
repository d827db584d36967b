// `meshsim compare-presets`: the default comparison runs without external data, the
// presets really change what happens (HIGH preempts the most batch work, LOW none within
// the batch pool), threads give the results of running one by one, policy files join
// in, and bad input is refused with a clear message.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

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
}

}  // namespace
}  // namespace meshsim::cli
