#include "sim/perf/perf_model.hpp"

#include <gtest/gtest.h>

namespace meshsim::cluster {
namespace {

ModelSpec llama70b() { return ModelSpec{.name = "llama2-70b", .parameters = 68.98e9, .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .dtype_bytes = 2, .hf_id = {}, .experts = 0, .experts_per_token = 0, .expert_parameters = 0}; }
SkuSpec h100() { return SkuSpec{.name = "h100-80gb", .gpus_per_node = 8, .hbm_gib_per_gpu = 80, .peak_tflops = 989, .hbm_tb_per_s = 3.35, .nvlink_gb_per_s = 900, .network_gb_per_s = 400, .power_kw = 10.2, .cost_per_hour = 98.32, .aliases = {}}; }

TEST(ModelSpecTest, KvBytesPerTokenFollowTheArchitecture) {
  EXPECT_EQ(llama70b().kv_bytes_per_token(), 2.0 * 80 * 8 * 128 * 2);  // GQA: 8 KV heads
  const ModelSpec bloom{.name = "bloom-176b", .parameters = 176.25e9, .layers = 70, .hidden = 14336, .heads = 112, .kv_heads = 112, .dtype_bytes = 2, .hf_id = {}, .experts = 0, .experts_per_token = 0, .expert_parameters = 0};
  EXPECT_EQ(bloom.kv_bytes_per_token(), 4'014'080.0);  // SplitwiseSim's figure
}

TEST(RooflinePerfModelTest, DecodeGrowsWithContextAndBatch) {
  const RooflinePerfModel model(llama70b(), h100(), 4, RooflineFactors{});
  const double short_context = model.decode_ms({8, 8 * 512});
  const double long_context = model.decode_ms({8, 8 * 8192});
  EXPECT_GT(long_context, short_context);
  EXPECT_GT(model.decode_ms({64, 64 * 512}), model.decode_ms({8, 8 * 512}));
}

TEST(RooflinePerfModelTest, PrefillIsBoundByWeightsWhenSmallAndComputeWhenLarge) {
  RooflineFactors factors;
  factors.prefill_overhead_ms = 0.0;
  const RooflinePerfModel model(llama70b(), h100(), 8, factors);
  // One token: reading 138 GB of weights over 8 x 3.35 TB/s takes 5.1 ms.
  EXPECT_NEAR(model.prefill_ms({1, 1, 1.0}), 68.98e9 * 2 / (8 * 3.35e12) * 1e3, 1e-6);
  // Many tokens: compute-bound, superlinear in the prompt (attention and the knee).
  const double t4k = model.prefill_ms({4096, 1, 4096.0 * 4096});
  const double t8k = model.prefill_ms({8192, 1, 8192.0 * 8192});
  EXPECT_GT(t8k, 2.0 * t4k);
  // The same tokens as several short prompts cost less attention than one long prompt.
  EXPECT_LT(model.prefill_ms({8192, 16, 16 * 512.0 * 512}), t8k);
}

TEST(PiecewiseLinearTest, InterpolatesAndExtrapolatesLinearly) {
  const PiecewiseLinear table({{128, 48.3}, {256, 51.2}, {512, 76.1}});
  EXPECT_DOUBLE_EQ(table(128), 48.3);
  EXPECT_NEAR(table(384), (51.2 + 76.1) / 2, 1e-12);
  EXPECT_NEAR(table(1024), 76.1 + 512 * (76.1 - 51.2) / 256, 1e-9);  // beyond the end
  EXPECT_NEAR(table(64), 48.3 - 64 * (51.2 - 48.3) / 128, 1e-9);     // before the start
}

}  // namespace
}  // namespace meshsim::cluster
