#include "sim/perf/step_time_model.hpp"

namespace meshsim::cluster {

StepFeatures peak_step_terms(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                             const StepContents& step) {
  const double tp = tensor_parallel;
  const double tokens = step.prefill_tokens + step.decode_batch;
  const double sequences = step.prefill_sequences + step.decode_batch;
  const double bytes_per_s = tp * sku.hbm_tb_per_s * 1e12;
  const double flops_per_s = tp * sku.peak_tflops * 1e12;
  const double linear_flops_per_s = tp * linear_peak_tflops(sku, model) * 1e12;
  const double kv_tokens = step.decode_context + step.prefill_context;
  StepFeatures f{};
  if (tokens == 0) return f;
  const auto at = [&f](StepTerm term) -> double& { return f[static_cast<std::size_t>(term)]; };
  at(StepTerm::kWeights) = model.weight_bytes_touched(tokens) / bytes_per_s;
  at(StepTerm::kLinearFlops) = 2.0 * model.active_parameters() * tokens / linear_flops_per_s;
  at(StepTerm::kKvReads) = kv_tokens * model.kv_bytes_per_token() / bytes_per_s;
  // Scores and values: 2 * 2 * heads * head_dim FLOPs per layer per (query, key) pair, and
  // a chunk of t after c cached tokens has ((c + t)^2 - c^2) / 2 pairs.
  at(StepTerm::kAttentionFlops) = 2.0 * model.layers * model.attention_width() * step.squared_tokens / flops_per_s;
  if (tensor_parallel > 1) {
    const double all_reduces = 2.0 * model.layers;
    // A ring all-reduce sends 2 (tp - 1) / tp of the activations over each GPU's link
    // (NVLink's figure is both directions together).
    const double traffic = all_reduces * tokens * model.hidden * model.dtype_bytes * 2.0 * (tp - 1.0) / tp;
    at(StepTerm::kAllReduceBytes) = traffic / (sku.nvlink_gb_per_s * 1e9 / 2.0);
    at(StepTerm::kAllReduces) = all_reduces * 1e-6;
  }
  at(StepTerm::kLayers) = model.layers * 1e-6;
  at(StepTerm::kSequences) = sequences * 1e-6;
  at(StepTerm::kStep) = 1e-6;
  return f;
}

namespace {

constexpr std::size_t index(StepTerm term) { return static_cast<std::size_t>(term); }

}  // namespace

StepFeatures step_features(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                           const StepContents& step) {
  StepFeatures f = peak_step_terms(model, sku, tensor_parallel, step);
  double& linear = f[index(StepTerm::kLinearFlops)];
  double& attention = f[index(StepTerm::kAttentionFlops)];
  const double share = unhidden_compute_share(f[index(StepTerm::kWeights)] + f[index(StepTerm::kKvReads)],
                                               linear + attention);
  linear *= share;
  attention *= share;
  return f;
}

StepTimeModel::StepTimeModel(ModelSpec model, SkuSpec sku, std::uint32_t tensor_parallel,
                             StepCoefficients coefficients)
    : model_(std::move(model)), sku_(std::move(sku)), tp_(tensor_parallel), c_(coefficients) {
  const auto peak = [this](const StepContents& step) { return peak_step_terms(model_, sku_, tp_, step); };
  // coefficients . terms without the weights, KV and FLOP terms (priced per step).
  const auto others = [this, &peak](const StepContents& step) {
    const StepFeatures f = peak(step);
    double total = 0;
    for (std::size_t i = 0; i < kStepTermCount; ++i) {
      const auto term = static_cast<StepTerm>(i);
      if (term == StepTerm::kWeights || term == StepTerm::kKvReads || term == StepTerm::kLinearFlops ||
          term == StepTerm::kAttentionFlops) {
        continue;
      }
      total += c_.step[i] * f[i];
    }
    return total;
  };
  // Unit steps: one prefill token alone, then with one more of each content.
  const StepFeatures one = peak({.prefill_tokens = 1});
  flops_per_token_ = peak({.prefill_tokens = 2})[index(StepTerm::kLinearFlops)] - one[index(StepTerm::kLinearFlops)];
  flops_per_squared_token_ = peak({.prefill_tokens = 1, .squared_tokens = 1})[index(StepTerm::kAttentionFlops)] -
                             one[index(StepTerm::kAttentionFlops)];
  kv_per_token_ = peak({.prefill_tokens = 1, .prefill_context = 1})[index(StepTerm::kKvReads)] -
                  one[index(StepTerm::kKvReads)];
  const double priced_one = others({.prefill_tokens = 1});
  per_token_ = others({.prefill_tokens = 2}) - priced_one;
  per_sequence_ = others({.prefill_tokens = 1, .prefill_sequences = 1}) - priced_one;
  per_step_ = priced_one - per_token_;
  dense_weights_s_ = weights_s(1);
}

double StepTimeModel::weights_s(double tokens) const {
  return peak_step_terms(model_, sku_, tp_, {.prefill_tokens = tokens})[index(StepTerm::kWeights)];
}

double StepTimeModel::seconds(const StepContents& step) const {
  const double tokens = step.prefill_tokens + step.decode_batch;
  if (tokens == 0) return 0;
  const double weights = model_.moe() ? weights_s(tokens) : dense_weights_s_;
  const double kv = kv_per_token_ * (step.prefill_context + step.decode_context);
  const double linear = flops_per_token_ * tokens;
  const double attention = flops_per_squared_token_ * step.squared_tokens;
  const double share = unhidden_compute_share(weights + kv, linear + attention);
  const auto& c = c_.step;
  return c[index(StepTerm::kWeights)] * weights + c[index(StepTerm::kKvReads)] * kv +
         share * (c[index(StepTerm::kLinearFlops)] * linear + c[index(StepTerm::kAttentionFlops)] * attention) +
         per_token_ * tokens + per_sequence_ * (step.prefill_sequences + step.decode_batch) + per_step_;
}

double StepTimeModel::iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const {
  return 1e3 * seconds(StepContents{static_cast<double>(prefill.tokens), static_cast<double>(prefill.sequences),
                                    prefill.squared_tokens, static_cast<double>(prefill.context_tokens),
                                    static_cast<double>(decode.batch), static_cast<double>(decode.context_tokens)});
}

}  // namespace meshsim::cluster
