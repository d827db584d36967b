#include "sim/perf/perf_model.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

RooflinePerfModel::RooflinePerfModel(ModelSpec model, SkuSpec sku, std::uint32_t tensor_parallel,
                                     RooflineFactors factors)
    : model_(std::move(model)), sku_(std::move(sku)), tp_(tensor_parallel), f_(factors) {
  MESHSIM_CHECK(tensor_parallel > 0, "tensor-parallel degree must be positive");
}

double RooflinePerfModel::prefill_ms(const PrefillWork& work) const {
  const double tokens = static_cast<double>(work.tokens);
  // 2 FLOPs per parameter per token for the matrix products (at the weights' precision's
  // peak), and 4 * layers * heads * head_dim per (query, key) pair for attention scores and
  // their weighted sum.
  // (The linear FLOPs are scaled to the 16-bit peak: 16-bit models' figures stay bit for bit.)
  const double linear_scale = sku_.peak_tflops / linear_peak_tflops(sku_, model_);
  const double flops = 2.0 * model_.parameters * tokens * linear_scale +
                       4.0 * model_.layers * model_.attention_width() * work.squared_tokens;
  const double compute_s =
      flops / (tp_ * sku_.peak_tflops * 1e12 * f_.prefill_efficiency) * (1.0 + tokens / f_.prefill_knee_tokens);
  const double weights_s = model_.weight_bytes() / (tp_ * sku_.hbm_tb_per_s * 1e12);
  return f_.prefill_overhead_ms + std::max(compute_s, weights_s) * 1e3;
}

double RooflinePerfModel::decode_ms(const DecodeWork& work) const {
  const double bytes = model_.weight_bytes() + model_.kv_bytes_per_token() * static_cast<double>(work.context_tokens);
  const double memory_s = bytes / (tp_ * sku_.hbm_tb_per_s * 1e12 * f_.decode_memory_efficiency);
  const double compute_s =
      2.0 * model_.parameters * work.batch / (tp_ * linear_peak_tflops(sku_, model_) * 1e12 * f_.decode_compute_efficiency);
  return f_.decode_overhead_ms + (memory_s + compute_s) * 1e3;
}

double RooflinePerfModel::iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const {
  if (prefill.tokens == 0) return decode_ms(decode);
  if (decode.batch == 0) return prefill_ms(prefill);
  return prefill_ms(PrefillWork{prefill.tokens + decode.batch, prefill.sequences + decode.batch,
                                prefill.squared_tokens + static_cast<double>(decode.context_tokens)});
}

PiecewiseLinear::PiecewiseLinear(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
  MESHSIM_CHECK(points_.size() >= 2, "a piecewise-linear table needs at least two points");
  for (std::size_t i = 1; i < points_.size(); ++i) {
    MESHSIM_CHECK(points_[i].first > points_[i - 1].first, "table x values must increase");
  }
}

double PiecewiseLinear::operator()(double x) const {
  // The segment containing x, or the first / last segment to extrapolate.
  auto upper = std::upper_bound(points_.begin(), points_.end(), x,
                                [](double value, const auto& point) { return value < point.first; });
  if (upper == points_.begin()) ++upper;
  if (upper == points_.end()) --upper;
  const auto& [x1, y1] = *(upper - 1);
  const auto& [x2, y2] = *upper;
  return y1 + (x - x1) * (y2 - y1) / (x2 - x1);
}

}  // namespace meshsim::cluster
