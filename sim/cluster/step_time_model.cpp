#include "sim/cluster/step_time_model.hpp"

namespace meshsim::cluster {

StepFeatures step_features(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                           const StepContents& step) {
  const double tp = tensor_parallel;
  const double tokens = step.prefill_tokens + step.decode_batch;
  const double sequences = step.prefill_sequences + step.decode_batch;
  const double bytes_per_s = tp * sku.hbm_tb_per_s * 1e12;
  const double flops_per_s = tp * sku.peak_tflops * 1e12;
  const double kv_tokens = step.decode_context + step.prefill_context;
  StepFeatures f{};
  if (tokens == 0) return f;
  const auto at = [&f](StepTerm term) -> double& { return f[static_cast<std::size_t>(term)]; };
  at(StepTerm::kWeights) = model.weight_bytes_touched(tokens) / bytes_per_s;
  at(StepTerm::kLinearFlops) = 2.0 * model.active_parameters() * tokens / flops_per_s;
  at(StepTerm::kKvReads) = kv_tokens * model.kv_bytes_per_token() / bytes_per_s;
  // Scores and values: 2 * 2 * hidden FLOPs per layer per (query, key) pair, and a chunk
  // of t after c cached tokens has ((c + t)^2 - c^2) / 2 pairs.
  at(StepTerm::kAttentionFlops) = 2.0 * model.layers * model.hidden * step.squared_tokens / flops_per_s;
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

StepTimeModel::StepTimeModel(ModelSpec model, SkuSpec sku, std::uint32_t tensor_parallel,
                             StepCoefficients coefficients)
    : model_(std::move(model)), sku_(std::move(sku)), tp_(tensor_parallel), c_(coefficients) {
  // coefficients . step_features without the weights term, at unit steps: one prefill
  // token alone, then with one more of each content.
  const auto priced = [this](const StepContents& step) {
    StepFeatures f = step_features(model_, sku_, tp_, step);
    f[static_cast<std::size_t>(StepTerm::kWeights)] = 0;
    double total = 0;
    for (std::size_t i = 0; i < kStepTermCount; ++i) total += c_.step[i] * f[i];
    return total;
  };
  const double one = priced({.prefill_tokens = 1});
  per_token_ = priced({.prefill_tokens = 2}) - one;
  per_sequence_ = priced({.prefill_tokens = 1, .prefill_sequences = 1}) - one;
  per_squared_token_ = priced({.prefill_tokens = 1, .squared_tokens = 1}) - one;
  per_cached_token_ = priced({.prefill_tokens = 1, .prefill_context = 1}) - one;
  per_step_ = one - per_token_;
  dense_weights_s_ = moe_weights_s(1);
}

double StepTimeModel::moe_weights_s(double tokens) const {
  constexpr auto kWeights = static_cast<std::size_t>(StepTerm::kWeights);
  return c_.step[kWeights] * step_features(model_, sku_, tp_, {.prefill_tokens = tokens})[kWeights];
}

double StepTimeModel::seconds(const StepContents& step) const {
  const double tokens = step.prefill_tokens + step.decode_batch;
  if (tokens == 0) return 0;
  return (model_.moe() ? moe_weights_s(tokens) : dense_weights_s_) + per_token_ * tokens + per_sequence_ * (step.prefill_sequences + step.decode_batch) +
         per_squared_token_ * step.squared_tokens + per_cached_token_ * (step.prefill_context + step.decode_context) +
         per_step_;
}

double StepTimeModel::iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const {
  return 1e3 * seconds(StepContents{static_cast<double>(prefill.tokens), static_cast<double>(prefill.sequences),
                                    prefill.squared_tokens, static_cast<double>(prefill.context_tokens),
                                    static_cast<double>(decode.batch), static_cast<double>(decode.context_tokens)});
}

}  // namespace meshsim::cluster
