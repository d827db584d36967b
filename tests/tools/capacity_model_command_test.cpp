// `meshsim capacity-model` end to end on the bundled RL recipe: stretches drawn from its
// training and validation spans, measured, every rung fitted and judged, the model and
// the labels written; and bad input refused naming what is wrong.
#include "tools/cli/capacity_model_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "configs/scenario_config.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

using testing::CommandRun;
using testing::csv_rows;
using testing::fresh_dir;
using testing::slurp;

CommandRun run(const CapacityModelCommandOptions& options) {
  return testing::run_command(options, run_capacity_model_command);
}

const std::string kRecipe = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/rl-train.json";

TEST(CapacityModelCommandTest, FitsOnTrainingStretchesAndJudgesOnValidationOnes) {
  CapacityModelCommandOptions options;
  options.config_path = kRecipe;
  options.stretches = 6;  // at least one per feature of the burstiness rung
  options.validation_stretches = 2;
  options.out_dir = fresh_dir("capacity_model").string();
  const CommandRun r = run(options);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("6 training and 2 validation stretches of 600 s"), std::string::npos) << r.out;
  for (const char* rung : {"constant", "tokens", "mix", "burstiness"}) {
    EXPECT_NE(r.out.find("\n  " + std::string(rung) + " "), std::string::npos) << rung << ": " << r.out;
  }
  const auto rows = csv_rows(slurp(options.out_dir + "/capacity_labels.csv"));
  ASSERT_EQ(rows.size(), (6u + 2u) * 4u);  // each stretch at 1, 2, 4 and 8 instances
  const auto recipe = configs::load_scenario(kRecipe);
  ASSERT_TRUE(recipe);
  for (const auto& row : rows) {
    const double start = std::stod(row.at("start_s"));
    EXPECT_EQ(std::fmod(start, 600), 0.0);
    const bool in_validation = start >= recipe->rl->validation[0].from_s && start + 600 <= recipe->rl->validation[0].to_s;
    EXPECT_EQ(row.at("split"), in_validation ? "validation" : "training") << start;
    if (!in_validation) {
      EXPECT_LE(start + 600, recipe->rl->training_span().to_s);
    }
  }
  const auto model = nlohmann::json::parse(slurp(options.out_dir + "/capacity_model.json"));
  EXPECT_EQ(model.at("features"), "burstiness");
  EXPECT_EQ(model.at("sizes").size(), 4u);
  // intercept, prompt mean, output mean, prompt p90, burstiness
  EXPECT_EQ(model.at("sizes")[0].at("seconds_per_request").size(), 5u);
  // The same seed draws and measures the same.
  CapacityModelCommandOptions again = options;
  again.out_dir = fresh_dir("capacity_model_again").string();
  ASSERT_EQ(run(again).code, kExitOk);
  EXPECT_EQ(slurp(again.out_dir + "/capacity_labels.csv"), slurp(options.out_dir + "/capacity_labels.csv"));
}

TEST(CapacityModelCommandTest, BadInputIsRefusedNamingWhatIsWrong) {
  CapacityModelCommandOptions options;
  options.config_path = kRecipe;
  options.out_dir = fresh_dir("capacity_model_bad").string();
  options.features = "quadratic";
  CommandRun r = run(options);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--features: expected one of 'constant', 'tokens', 'mix', 'burstiness', got 'quadratic'"),
            std::string::npos)
      << r.err;
  options.features = "mix";
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/default.json";
  r = run(options);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("default.json: expected a recipe with rl.validation spans"), std::string::npos) << r.err;
  // No validation stretch busy enough to be a sample: an error over nothing would read 0%
  // and accept any model.
  options.config_path = kRecipe;
  options.stretch_s = 60;
  options.stretches = 2;
  options.validation_stretches = 1;
  options.least_requests = 1'000'000;
  r = run(options);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("no validation stretch has 1000000 requests (--least-requests): nothing to judge a model on"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace meshsim::cli
