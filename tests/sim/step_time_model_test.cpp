#include "sim/perf/step_time_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/perf/step_calibration.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::cluster {
namespace {

ModelSpec mixtral() {
  ModelSpec m;
  m.name = "mixtral";
  m.parameters = 46.70e9;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.experts = 8;
  m.experts_per_token = 2;
  m.expert_parameters = 45.10e9;
  return m;
}

SkuSpec h100() {
  SkuSpec s;
  s.name = "h100-80gb";
  return s;
}

double term(const StepFeatures& f, StepTerm t) { return f[static_cast<std::size_t>(t)]; }

TEST(ModelSpecTest, MixtureOfExpertsComputesOnActiveAndReadsTheExpertsTouched) {
  const ModelSpec m = mixtral();
  EXPECT_NEAR(m.active_parameters(), 46.70e9 - 45.10e9 * 0.75, 1e6);
  // One token reads its 2 experts of 8 per layer; many tokens read them all.
  EXPECT_NEAR(m.weight_bytes_touched(1), (46.70e9 - 45.10e9 * 0.75) * 2, 1e6);
  EXPECT_NEAR(m.weight_bytes_touched(1000), m.weight_bytes(), 1.0);
  double previous = 0;
  for (double tokens : {1.0, 2.0, 4.0, 8.0, 16.0}) {
    EXPECT_GT(m.weight_bytes_touched(tokens), previous);
    previous = m.weight_bytes_touched(tokens);
  }
}

TEST(StepTimeModelTest, TermsFollowTheStepsContents) {
  const ModelSpec m = mixtral();
  const auto decode = peak_step_terms(m, h100(), 2, StepContents{0, 0, 0, 0, 16, 16 * 1000.0});
  const auto longer = peak_step_terms(m, h100(), 2, StepContents{0, 0, 0, 0, 16, 16 * 4000.0});
  EXPECT_DOUBLE_EQ(term(longer, StepTerm::kKvReads), 4 * term(decode, StepTerm::kKvReads));
  EXPECT_DOUBLE_EQ(term(longer, StepTerm::kWeights), term(decode, StepTerm::kWeights));
  EXPECT_DOUBLE_EQ(term(decode, StepTerm::kAttentionFlops), 0.0);
  EXPECT_DOUBLE_EQ(term(decode, StepTerm::kAllReduces), 64e-6);  // 2 per layer
  const auto tp1 = peak_step_terms(m, h100(), 1, StepContents{0, 0, 0, 0, 16, 16 * 1000.0});
  EXPECT_DOUBLE_EQ(term(tp1, StepTerm::kAllReduces), 0.0);
  EXPECT_DOUBLE_EQ(term(tp1, StepTerm::kAllReduceBytes), 0.0);
  EXPECT_DOUBLE_EQ(term(tp1, StepTerm::kWeights), 2 * term(decode, StepTerm::kWeights));
  // Attention grows with the square of the prompt.
  const auto chunk = peak_step_terms(m, h100(), 2, StepContents{512, 1, 512.0 * 512, 0, 0, 0});
  const auto twice = peak_step_terms(m, h100(), 2, StepContents{1024, 1, 1024.0 * 1024, 0, 0, 0});
  EXPECT_DOUBLE_EQ(term(twice, StepTerm::kAttentionFlops), 4 * term(chunk, StepTerm::kAttentionFlops));
  EXPECT_DOUBLE_EQ(term(twice, StepTerm::kLinearFlops), 2 * term(chunk, StepTerm::kLinearFlops));
  EXPECT_GT(term(chunk, StepTerm::kLinearFlops), 0.0);
}

// fp8 weights halve the bytes a step reads and, on a GPU with FP8 tensor cores, the time
// of its linear FLOPs; an fp8 KV cache halves its KV reads; attention stays at 16 bits.
// A GPU without FP8 tensor cores (A100) computes fp8 weights at its 16-bit peak.
TEST(StepTimeModelTest, Fp8WeightsAndKvHalveTheirBytesAndFp8TensorCoresTheLinearTime) {
  SkuSpec hopper = h100();
  hopper.peak_tflops_fp8 = 2 * hopper.peak_tflops;
  SkuSpec ampere = h100();
  ampere.peak_tflops_fp8 = 0;
  ModelSpec fp8 = mixtral();
  fp8.weights = Precision::kFp8;
  ModelSpec fp8_kv = mixtral();
  fp8_kv.kv_cache = Precision::kFp8;
  const StepContents step{512, 1, 512.0 * 512, 0, 16, 16 * 1000.0};
  const auto bf16 = peak_step_terms(mixtral(), hopper, 2, step);
  const auto on_hopper = peak_step_terms(fp8, hopper, 2, step);
  const auto on_ampere = peak_step_terms(fp8, ampere, 2, step);
  EXPECT_DOUBLE_EQ(term(on_hopper, StepTerm::kWeights), term(bf16, StepTerm::kWeights) / 2);
  EXPECT_DOUBLE_EQ(term(on_hopper, StepTerm::kLinearFlops), term(bf16, StepTerm::kLinearFlops) / 2);
  EXPECT_DOUBLE_EQ(term(on_ampere, StepTerm::kWeights), term(bf16, StepTerm::kWeights) / 2);
  EXPECT_DOUBLE_EQ(term(on_ampere, StepTerm::kLinearFlops), term(bf16, StepTerm::kLinearFlops));
  for (const auto& f : {on_hopper, on_ampere}) {
    EXPECT_DOUBLE_EQ(term(f, StepTerm::kAttentionFlops), term(bf16, StepTerm::kAttentionFlops));
    EXPECT_DOUBLE_EQ(term(f, StepTerm::kKvReads), term(bf16, StepTerm::kKvReads));
  }
  const auto kv8 = peak_step_terms(fp8_kv, hopper, 2, step);
  EXPECT_DOUBLE_EQ(term(kv8, StepTerm::kKvReads), term(bf16, StepTerm::kKvReads) / 2);
  EXPECT_DOUBLE_EQ(term(kv8, StepTerm::kWeights), term(bf16, StepTerm::kWeights));
  EXPECT_DOUBLE_EQ(fp8_kv.kv_bytes_per_token(), mixtral().kv_bytes_per_token() / 2);
}

// At unit coefficients the roofline terms of a step add up to max(memory, compute) at the
// hardware's peaks, not their sum: a decode batch's FLOPs hide under its weight reads, a
// long prefill chunk's memory reads under its FLOPs. Random steps of a dense and a MoE
// model at TP 1, 2 and 4.
TEST(StepTimeModelTest, ComputeHidesUnderMemoryAndMemoryUnderCompute) {
  engine::Rng rng(5);
  ModelSpec dense = mixtral();
  dense.experts = dense.experts_per_token = 0;
  dense.expert_parameters = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const ModelSpec& m = trial % 2 == 0 ? dense : mixtral();
    const std::uint32_t tp = 1u << rng.uniform_int(3);
    const double tokens = static_cast<double>(rng.uniform_int(8192));
    const double batch = static_cast<double>(rng.uniform_int(512));
    const StepContents step{tokens, tokens > 0 ? 1.0 : 0.0, tokens * tokens * rng.uniform(),
                            static_cast<double>(rng.uniform_int(20'000)), batch, batch * rng.uniform_int(4000)};
    const StepFeatures peak = peak_step_terms(m, h100(), tp, step);
    const StepFeatures f = step_features(m, h100(), tp, step);
    const double memory = term(peak, StepTerm::kWeights) + term(peak, StepTerm::kKvReads);
    const double compute = term(peak, StepTerm::kLinearFlops) + term(peak, StepTerm::kAttentionFlops);
    const double roofline = term(f, StepTerm::kWeights) + term(f, StepTerm::kKvReads) + term(f, StepTerm::kLinearFlops) +
                            term(f, StepTerm::kAttentionFlops);
    EXPECT_NEAR(roofline, std::max(memory, compute), 1e-12 * std::max(memory, compute)) << "trial " << trial;
  }
  // Llama-2-70B-like at TP 4: a decode batch of 64 is bound by its weights, a 4,096-token
  // prefill chunk by its FLOPs.
  ModelSpec llama = dense;
  llama.parameters = 69e9;
  const StepFeatures decode = step_features(llama, h100(), 4, {.decode_batch = 64, .decode_context = 64 * 1000.0});
  EXPECT_EQ(term(decode, StepTerm::kLinearFlops), 0.0);
  const StepFeatures prefill = step_features(llama, h100(), 4, {.prefill_tokens = 4096, .prefill_sequences = 1});
  EXPECT_GT(term(prefill, StepTerm::kLinearFlops), 3 * term(prefill, StepTerm::kWeights));
}

// The model prices a step with coefficients folded into per-unit constants; on random
// steps of dense and MoE models at TP 1, 2 and 4 under random coefficients it agrees with
// coefficients . step_features to rounding.
TEST(StepTimeModelTest, IterationIsTheCoefficientsTimesTheTerms) {
  engine::Rng rng(11);
  ModelSpec dense = mixtral();
  dense.experts = dense.experts_per_token = 0;
  dense.expert_parameters = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const ModelSpec& m = trial % 2 == 0 ? dense : mixtral();
    const std::uint32_t tp = 1u << rng.uniform_int(3);
    StepCoefficients c;
    for (double& k : c.step) k = rng.uniform() < 0.3 ? 0.0 : 100 * rng.uniform();
    const StepTimeModel model(m, h100(), tp, c);
    const auto tokens = static_cast<std::uint32_t>(rng.uniform_int(4096));
    PrefillWork prefill{tokens, tokens > 0 ? 1 + static_cast<std::uint32_t>(rng.uniform_int(4)) : 0,
                        static_cast<double>(tokens) * tokens * rng.uniform(), rng.uniform_int(20'000)};
    DecodeWork decode{static_cast<std::uint32_t>(rng.uniform_int(256)), rng.uniform_int(1'000'000)};
    if (decode.batch == 0) decode.context_tokens = 0;
    const auto f = step_features(m, h100(), tp,
                                 StepContents{static_cast<double>(prefill.tokens), static_cast<double>(prefill.sequences),
                                              prefill.squared_tokens, static_cast<double>(prefill.context_tokens),
                                              static_cast<double>(decode.batch), static_cast<double>(decode.context_tokens)});
    double expected = 0;
    for (std::size_t i = 0; i < kStepTermCount; ++i) expected += c.step[i] * f[i];
    EXPECT_NEAR(model.iteration_ms(prefill, decode), expected * 1e3, 1e-9 * expected * 1e3) << "trial " << trial;
  }
  EXPECT_DOUBLE_EQ(StepTimeModel(mixtral(), h100(), 2, {}).iteration_ms({}, {}), 0.0);
}

// The unconstrained least-squares optimum over every subset of columns, kept when
// non-negative: the NNLS optimum is one of them.
std::vector<double> brute_force_nnls(const std::vector<double>& a, std::size_t n, const std::vector<double>& b) {
  const std::size_t rows = b.size();
  std::vector<double> best(n, 0.0);
  double best_residual = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t c = 0; c < n; ++c) {
      if (mask & (1u << c)) cols.push_back(c);
    }
    std::vector<double> x(n, 0.0);
    if (!cols.empty()) {
      // Normal equations by Gaussian elimination (small, well-conditioned draws).
      const std::size_t k = cols.size();
      std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
      for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t j = 0; j < k; ++j) {
          for (std::size_t r = 0; r < rows; ++r) m[i][j] += a[r * n + cols[i]] * a[r * n + cols[j]];
        }
        for (std::size_t r = 0; r < rows; ++r) m[i][k] += a[r * n + cols[i]] * b[r];
      }
      for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t r = i + 1; r < k; ++r) {
          const double f = m[r][i] / m[i][i];
          for (std::size_t j = i; j <= k; ++j) m[r][j] -= f * m[i][j];
        }
      }
      std::vector<double> z(k);
      for (std::size_t i = k; i-- > 0;) {
        double s = m[i][k];
        for (std::size_t j = i + 1; j < k; ++j) s -= m[i][j] * z[j];
        z[i] = s / m[i][i];
      }
      if (std::any_of(z.begin(), z.end(), [](double v) { return v < 0; })) continue;
      for (std::size_t i = 0; i < k; ++i) x[cols[i]] = z[i];
    }
    double residual = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      double s = -b[r];
      for (std::size_t c = 0; c < n; ++c) s += a[r * n + c] * x[c];
      residual += s * s;
    }
    if (residual < best_residual) {
      best_residual = residual;
      best = x;
    }
  }
  return best;
}

TEST(NonnegativeLeastSquaresTest, MatchesTheBestNonNegativeSubsetSolutionOnRandomProblems) {
  engine::Rng rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng.uniform_int(5);
    const std::size_t rows = n + rng.uniform_int(8);
    std::vector<double> a(rows * n), b(rows);
    for (double& v : a) v = rng.uniform() * 2 - 1;
    for (double& v : b) v = rng.uniform() * 2 - 1;
    const auto fast = nonnegative_least_squares(a, n, b);
    const auto slow = brute_force_nnls(a, n, b);
    for (std::size_t c = 0; c < n; ++c) {
      EXPECT_GE(fast[c], 0.0);
      EXPECT_NEAR(fast[c], slow[c], 1e-6) << "trial " << trial << " column " << c;
    }
  }
}

// Loads whose measurements the coefficients `truth` produce exactly: each load's mean
// step and TTFT solved as a fixed point of the equations (the steps' contents depend on
// the step through Little's law).
SteadyLoad consistent_load(const StepCoefficients& truth, ModelSpec model, std::uint32_t tp, double rate) {
  SteadyLoad load;
  load.model = std::move(model);
  load.sku = h100();
  load.tensor_parallel = tp;
  load.rate_per_s = rate;
  load.prompt_tokens = 600;
  load.cached_tokens = 96;
  load.output_tokens = 250;
  double step = 0.01, ttft = 0.05;
  for (int i = 0; i < 2000; ++i) {
    load.e2e_mean_s = ttft + step * (load.output_tokens - 1);
    load.ttft_mean_s = ttft;
    const auto p = predict(truth, load);
    // Damped: more running decodes make a longer step, which admits more.
    step = (step + p.step_s) / 2;
    ttft = (ttft + p.ttft_s) / 2;
  }
  load.e2e_mean_s = ttft + step * (load.output_tokens - 1);
  load.ttft_mean_s = ttft;
  return load;
}

TEST(StepCalibrationTest, RecoversThePredictionsOfCoefficientsThatMadeTheMeasurements) {
  StepCoefficients truth;
  truth.step = {1.3, 2.0, 1.1, 1.0, 1.2, 3.0, 0.0, 15.0, 500.0};
  truth.request.pre_queue_ms = 8;
  ModelSpec dense = mixtral();
  dense.name = "dense";
  dense.experts = 0;
  dense.experts_per_token = 0;
  dense.expert_parameters = 0;
  dense.parameters = 13e9;
  std::vector<SteadyLoad> loads;
  for (double rate : {2.0, 4.0, 6.0, 8.0}) {
    loads.push_back(consistent_load(truth, mixtral(), 2, rate));
    loads.push_back(consistent_load(truth, dense, 1, rate));
  }
  const StepCoefficients fit = fit_step_coefficients(loads);
  for (const auto& load : loads) {
    const auto eq = load_equations(load);
    const auto want = predict(truth, load);
    ASSERT_NEAR(want.step_s / eq.step_s, 1.0, 1e-9) << "the load is not at its fixed point";
    const auto got = predict(fit, load);
    EXPECT_NEAR(got.step_s / want.step_s, 1.0, 1e-3);
    EXPECT_NEAR(got.ttft_s / want.ttft_s, 1.0, 1e-3);
  }
}

// A fit never claims a GPU faster than its peak: measurements made by coefficients below 1
// on the roofline terms (prefill FLOPs at 5x the peak, which loads of short prompts barely
// exercise) are fitted with every roofline coefficient at 1 or more.
TEST(StepCalibrationTest, RooflineCoefficientsStayAtOrAboveThePeaks) {
  StepCoefficients truth;
  truth.step = {0.8, 0.2, 0.9, 0.5, 0.3, 3.0, 0.0, 15.0, 500.0};
  truth.request.pre_queue_ms = 8;
  std::vector<SteadyLoad> loads;
  for (double rate : {2.0, 4.0, 6.0, 8.0}) loads.push_back(consistent_load(truth, mixtral(), 2, rate));
  const StepCoefficients fit = fit_step_coefficients(loads);
  for (const StepTerm term : {StepTerm::kWeights, StepTerm::kLinearFlops, StepTerm::kKvReads,
                              StepTerm::kAttentionFlops, StepTerm::kAllReduceBytes}) {
    EXPECT_GE(fit.step[static_cast<std::size_t>(term)], 1.0) << kStepTermNames[static_cast<std::size_t>(term)];
  }
  for (const double k : fit.step) EXPECT_GE(k, 0.0);
}

}  // namespace
}  // namespace meshsim::cluster
