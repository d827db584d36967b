// Tests on the real public traces in ../shared/traces; each skips, saying so, when the
// folder is absent.
#include <gtest/gtest.h>

#include "tests/shared_data.hpp"

#include <filesystem>

#include "traces/trace_stats.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

std::string shared_trace(const std::string& name) { return meshsim::testing::shared_path("traces/" + name); }

TEST(RealTracesTest, AzureConversationTraceStreamsAllRows) {
  const auto path = shared_trace("azure2023_conv.csv");
  MESHSIM_NEED_SHARED_FILE(path);
  auto source = open_trace_file(TraceFileSpec{path, TraceFormat::kAzureCsv, {}});
  ASSERT_TRUE(source) << source.error().message;
  auto stats = summarize(**source);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->requests, 19366u);
  EXPECT_NEAR(stats->duration_s, 3501.72, 0.01);
  EXPECT_NEAR(stats->prompt_mean, 1154.7, 0.1);
  EXPECT_NEAR(stats->output_mean, 211.1, 0.1);
  EXPECT_EQ(stats->prompt_tokens.quantiles.back().second, 14050.0);
  EXPECT_EQ(stats->output_tokens.quantiles.back().second, 1000.0);
}

TEST(RealTracesTest, MooncakeConversationTraceStreamsAllRowsWithHashIds) {
  const auto path = shared_trace("mooncake_fast25_conversation.jsonl");
  MESHSIM_NEED_SHARED_FILE(path);
  auto source = open_trace_file(TraceFileSpec{path, TraceFormat::kMooncakeJsonl, {}});
  ASSERT_TRUE(source) << source.error().message;
  std::uint64_t rows = 0;
  std::uint64_t with_hashes = 0;
  for (;;) {
    auto next = (*source)->next();
    ASSERT_TRUE(next) << next.error().message;
    if (!next->has_value()) break;
    ++rows;
    with_hashes += !(*next)->prefix.empty();
    // One id per 512-token block.
    EXPECT_EQ((*next)->prefix.size(), ((*next)->prompt_tokens + 511) / 512);
  }
  EXPECT_EQ(rows, 12031u);
  EXPECT_EQ(with_hashes, rows);
}

}  // namespace
}  // namespace meshsim::traces
