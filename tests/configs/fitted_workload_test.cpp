// The shipped Azure-conversation generator (configs/workloads/azure_conv.json) must
// reproduce the trace's published statistics, and must be what `fit-trace` makes of the
// trace today.
#include <gtest/gtest.h>

#include "tests/shared_data.hpp"

#include <filesystem>

#include "configs/scenario_config.hpp"
#include "tests/test_paths.hpp"
#include "traces/generated_source.hpp"
#include "traces/trace_stats.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::configs {
namespace {

const std::string kFitPath = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json";

TEST(FittedWorkloadTest, GeneratorReproducesTheAzureConversationStatistics) {
  auto spec = load_generator(kFitPath);
  ASSERT_TRUE(spec) << spec.error().message;
  traces::GeneratedSource source(*spec, 42);
  auto stats = traces::summarize(source);
  ASSERT_TRUE(stats) << stats.error().message;
  // Published figures of azure2023_conv.csv (see ../shared/traces/README.md).
  EXPECT_EQ(stats->requests, 19366u);
  EXPECT_NEAR(stats->prompt_mean, 1155.0, 1155.0 * 0.02);
  EXPECT_NEAR(stats->output_mean, 211.0, 211.0 * 0.02);
  EXPECT_NEAR(stats->rate_per_s, 5.53, 5.53 * 0.03);
  EXPECT_NEAR(stats->interarrival_cv, 1.094, 0.05);
  // Lengths stay within the trace's range (prompt max 14,050, output max 1,000).
  EXPECT_LE(stats->prompt_tokens.quantiles.back().second, 14050.0);
  EXPECT_LE(stats->output_tokens.quantiles.back().second, 1000.0);
  EXPECT_GE(stats->prompt_tokens.quantiles.front().second, 2.0);
}

TEST(FittedWorkloadTest, ShippedFitIsWhatFitTraceGivesOnTheRealTrace) {
  const std::string trace = std::string(MESHSIM_SHARED_DIR) + "/traces/azure2023_conv.csv";
  MESHSIM_NEED_SHARED_FILE(trace);
  auto source = traces::open_trace_file(traces::TraceFileSpec{trace, traces::TraceFormat::kAzureCsv, {}});
  ASSERT_TRUE(source);
  auto stats = traces::summarize(**source);
  ASSERT_TRUE(stats);
  const auto fitted = traces::fit_generator(*stats, "azure-conv-2023");
  auto shipped = load_generator(kFitPath);
  ASSERT_TRUE(shipped);
  EXPECT_NEAR(shipped->arrivals.rate_per_s, fitted.arrivals.rate_per_s, 1e-6);
  EXPECT_NEAR(shipped->arrivals.cv, fitted.arrivals.cv, 1e-6);
  EXPECT_EQ(shipped->prompt_tokens.quantiles, fitted.prompt_tokens.quantiles);
  EXPECT_EQ(shipped->output_tokens.quantiles, fitted.output_tokens.quantiles);
  EXPECT_EQ(shipped->requests, fitted.requests);
}

}  // namespace
}  // namespace meshsim::configs
