// The shipped roofline factors (configs/perf_fits.json) against every row of SplitwiseSim's
// measured profile (../shared/reference/splitwise_perf_model.csv), per deployment.
//
// Bound: 15% mean absolute percentage error for prefill and for decode, per deployment.
// Why 15%: the measurements themselves repeat within about 2% (5 runs per point), but
// prefill efficiency falls in steps the hardware's tiling causes (BLOOM on H100: 2,048 to
// 4,096 tokens costs 2.6x, not 2x), which a smooth roofline with three factors can only
// average; 15% is well below the spread between SKUs (H100 prefill is 2-3x faster than
// A100) that a simulation must resolve, and it is the stated aim.
#include <gtest/gtest.h>

#include "tests/shared_data.hpp"

#include <cstdio>
#include <filesystem>

#include "configs/catalog.hpp"
#include "configs/profile_csv.hpp"
#include "sim/perf/perf_profile.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::cluster {
namespace {

constexpr double kBoundPercent = 15.0;

TEST(CalibrationTest, RooflineMatchesTheSplitwiseProfileWithinTheBound) {
  const std::string path = std::string(MESHSIM_SHARED_DIR) + "/reference/splitwise_perf_model.csv";
  MESHSIM_NEED_SHARED_FILE(path);
  auto catalog = configs::load_catalog(std::string(MESHSIM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(catalog) << catalog.error().message;
  auto rows = configs::read_profile_csv(path);
  ASSERT_TRUE(rows) << rows.error().message;
  std::vector<ProfileRow> dropped;
  const auto kept = drop_non_monotonic(*rows, &dropped);
  // Only llama2-70b at TP 2 with 64 prompts (all three SKUs, 5 repeats) is inconsistent.
  EXPECT_EQ(dropped.size(), 15u);
  for (const auto& row : dropped) {
    EXPECT_EQ(row.tensor_parallel, 2u);
    EXPECT_EQ(row.batch_size, 64u);
  }
  ASSERT_EQ(catalog->fits.size(), 12u);
  std::printf("deployment                          rows  prefill MAPE  decode MAPE  (all rows: prefill, decode)\n");
  for (const auto& fit : catalog->fits) {
    const RooflinePerfModel model(catalog->models.at(fit.model), catalog->skus.at(fit.sku), fit.tensor_parallel,
                                  fit.factors);
    const auto error = profile_error(model, select_rows(kept, fit.model, fit.sku, fit.tensor_parallel));
    const auto all = profile_error(model, select_rows(*rows, fit.model, fit.sku, fit.tensor_parallel));
    std::printf("%-34s %4zu %12.1f%% %11.1f%%  (%zu: %.1f%%, %.1f%%)\n",
                (fit.model + " " + fit.sku + " TP" + std::to_string(fit.tensor_parallel)).c_str(), error.rows,
                error.prefill_mape, error.decode_mape, all.rows, all.prefill_mape, all.decode_mape);
    EXPECT_GE(error.rows, 100u);
    EXPECT_LE(error.prefill_mape, kBoundPercent) << fit.model << " " << fit.sku << " TP" << fit.tensor_parallel;
    EXPECT_LE(error.decode_mape, kBoundPercent) << fit.model << " " << fit.sku << " TP" << fit.tensor_parallel;
  }
}

TEST(CalibrationTest, TableBackendReproducesSplitwiseSimMedians) {
  const std::string path = std::string(MESHSIM_SHARED_DIR) + "/reference/splitwise_perf_model.csv";
  MESHSIM_NEED_SHARED_FILE(path);
  auto rows = configs::read_profile_csv(path);
  ASSERT_TRUE(rows);
  auto table = make_table_model(select_rows(*rows, "bloom-176b", "h100-80gb", 8));
  ASSERT_TRUE(table) << table.error().message;
  // splitwise_results.md: medians per batch_tokens 128 ... 8192.
  const std::vector<std::tuple<std::uint64_t, double, double>> expected = {
      {128, 48.3, 35.7}, {256, 51.2, 36.2}, {512, 76.1, 36.2}, {1024, 132.2, 36.3},
      {2048, 252.0, 36.7}, {4096, 649.6, 37.5}, {8192, 1411.6, 39.0}};
  for (const auto& [tokens, prompt_ms, token_ms] : expected) {
    EXPECT_NEAR(table->prefill_ms({tokens, 1, 0.0}), prompt_ms, 0.06) << tokens;
    EXPECT_NEAR(table->decode_ms({static_cast<std::uint32_t>(tokens), 0}), token_ms, 0.06) << tokens;
  }
}

}  // namespace
}  // namespace meshsim::cluster
