// `meshsim replay --autoscaler`: every policy runs end to end, folds exactly, reports its
// scaling in summary.json and logs in the seed's shape; bad choices are bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

using testing::scenario_in_fresh_dir;
using testing::slurp;

nlohmann::json default_config() {
  auto config = nlohmann::json::parse(slurp(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/default.json"));
  config["workload"]["generator"] = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json";
  return config;
}

struct RunOutcome {
  int code = 0;
  std::string out, err;
  std::filesystem::path dir;
  nlohmann::json summary;
};

RunOutcome replay(const nlohmann::json& config, const std::string& name, const std::string& autoscaler,
           bool log = false) {
  RunOutcome run;
  const auto path = scenario_in_fresh_dir(name, "scenario.json", config.dump());
  ReplayCommandOptions options;
  options.config_path = path.string();
  options.out_dir = (path.parent_path() / "out").string();
  options.autoscaler = autoscaler;
  options.scaling_log = log;
  options.quiet = true;
  std::ostringstream out, err;
  run.code = run_replay_command(options, out, err);
  run.out = out.str();
  run.err = err.str();
  run.dir = options.out_dir;
  if (run.code == kExitOk) run.summary = nlohmann::json::parse(slurp(run.dir / "summary.json"));
  return run;
}

// Decisions see only what folding does not change, so every policy's outputs are the
// same bytes folded or not, and every request is accounted for.
TEST(AutoscalerCommandTest, EveryPolicyRunsFoldsExactlyAndAccountsForEveryRequest) {
  for (const char* policy : {"static", "elastic", "target_tracking", "oracle"}) {
    SCOPED_TRACE(policy);
    auto config = default_config();
    config["run"]["until_s"] = 1200;
    config["autoscaler"]["target_tracking"]["target"] = 16;
    config["autoscaler"]["elastic"]["requests_per_worker_capacity"] = 24;
    std::map<bool, RunOutcome> runs;
    for (const bool fold : {true, false}) {
      config["serving"]["fold_decode"] = fold;
      runs[fold] = replay(config, std::string(policy) + (fold ? "_folded" : "_unfolded"), policy);
      ASSERT_EQ(runs[fold].code, kExitOk) << runs[fold].err;
    }
    for (const char* file : {"requests.csv", "timeseries.csv"}) {
      EXPECT_TRUE(slurp(runs[true].dir / file) == slurp(runs[false].dir / file)) << file << " differs";
    }
    const auto& s = runs[true].summary;
    const auto& r = s["requests"];
    EXPECT_EQ(r["arrived"].get<std::uint64_t>(),
              r["completed"].get<std::uint64_t>() + r["dropped"].get<std::uint64_t>() +
                  r["in_flight"].get<std::uint64_t>());
    ASSERT_TRUE(s.contains("scaling"));
    EXPECT_EQ(s["scaling"]["autoscaler"], policy);
    EXPECT_GT(s["scaling"]["decisions"].get<std::uint64_t>(), 0u);
    if (std::string(policy) != "static") {
      EXPECT_GT(s["scaling"]["scale_ups"].get<std::uint64_t>() + s["scaling"]["scale_downs"].get<std::uint64_t>(), 0u)
          << "a day's load changes over 20 minutes: the policy should act";
    }
    EXPECT_EQ(s["config"]["autoscaler"]["policy"], policy);
  }
}

// Capacity-units target tracking watches the requests' work as they arrive and complete:
// still the same bytes folded or not (completions reach it at the same times), and it
// acts on a day's load.
TEST(AutoscalerCommandTest, CapacityUnitsTrackingFoldsExactly) {
  const auto model = std::filesystem::temp_directory_path() / "meshsim_fold_capacity_model.json";
  std::ofstream(model) << R"({"format": 1, "features": "tokens",
      "sizes": [{"instances": 1, "seconds_per_request": [0.05, 0.3]}]})";
  auto config = default_config();
  config["run"]["until_s"] = 1200;
  config["autoscaler"]["target_tracking"] = {
      {"metric", "capacity_units"}, {"target", 0.5}, {"capacity_model", model.string()}};
  std::map<bool, RunOutcome> runs;
  for (const bool fold : {true, false}) {
    config["serving"]["fold_decode"] = fold;
    runs[fold] = replay(config, std::string("capacity_units") + (fold ? "_folded" : "_unfolded"), "target_tracking");
    ASSERT_EQ(runs[fold].code, kExitOk) << runs[fold].err;
  }
  for (const char* file : {"requests.csv", "timeseries.csv"}) {
    EXPECT_TRUE(slurp(runs[true].dir / file) == slurp(runs[false].dir / file)) << file << " differs";
  }
  const auto& scaling = runs[true].summary["scaling"];
  EXPECT_GT(scaling["scale_ups"].get<std::uint64_t>() + scaling["scale_downs"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(runs[true].summary["config"]["autoscaler"]["target_tracking"]["capacity_model"], model.string());
}

TEST(AutoscalerCommandTest, TheScalingLogHasTheSeedsShape) {
  auto config = default_config();
  config["run"]["until_s"] = 600;
  config["autoscaler"]["static"]["sizes"]["mixed"] = 6;
  const auto run = replay(config, "static_log", "static", true);
  ASSERT_EQ(run.code, kExitOk) << run.err;
  EXPECT_NE(run.err.find("[ScalingManager] Full scale-up: server 2 + instance 4\n"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("[ScalingManager] Instance 4 scaled up at 10.00\n"), std::string::npos) << run.err;
  EXPECT_EQ(run.summary["scaling"]["scale_ups"], 2);
  EXPECT_DOUBLE_EQ(run.summary["scaling"]["mean_instances"].get<double>(), 6.0)
      << "the two added at 0 s hold their GPUs from then: STARTING counts";
}

TEST(AutoscalerCommandTest, BadPoliciesAndParametersAreBadInputNamingTheKey) {
  auto config = default_config();
  auto run = replay(config, "bad_policy", "hpa");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("--autoscaler: expected one of 'none', 'static', 'elastic', 'target_tracking', "
                         "'oracle', got 'hpa'"),
            std::string::npos)
      << run.err;

  config["autoscaler"]["elastic"]["scale_down_threshold"] = 0.9;
  run = replay(config, "bad_thresholds", "elastic");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("autoscaler.elastic.scale_down_threshold: must be at least 0 and below scale_up_threshold"),
            std::string::npos)
      << run.err;

  config = default_config();
  config["autoscaler"]["static"]["sizes"]["token"] = 2;
  run = replay(config, "bad_static", "static");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("autoscaler.static.sizes.token: the start state has no instance of this tag"),
            std::string::npos)
      << run.err;

  // Periods under a millisecond would only add events (a long drain checked every
  // microsecond never ends); instance counts are bounded.
  config = default_config();
  config["scaling"]["drain_check_interval_s"] = 1e-6;
  config["scaling"]["max_total_instances"] = 1'000'000;
  config["autoscaler"]["target_tracking"]["scale_up_percent"] = 1e300;
  run = replay(config, "bad_ranges", "target_tracking");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("scaling.drain_check_interval_s: expected at least 0.001 s"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("scaling.max_total_instances: expected an integer in [1, 100000]"), std::string::npos)
      << run.err;

  config = default_config();
  config["serving"] = {{"kind", "fixed_latency"}};
  run = replay(config, "fixed_latency", "target_tracking");
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_NE(run.err.find("autoscaling needs the llm serving model"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace meshsim::cli
