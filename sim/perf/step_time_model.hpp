#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "sim/perf/hardware.hpp"
#include "sim/perf/perf_model.hpp"

namespace meshsim::cluster {

// The terms an engine step's time is the sum of, each a physical quantity of the step in
// seconds (a roofline time, a count of overheads in microseconds) that a fitted
// coefficient scales, so the time is linear in the coefficients and a bounded
// least-squares fit finds them. The FLOP terms count only the compute not hidden under
// the step's memory reads (kernels overlap the two): at unit coefficients the roofline
// part of a step is max(memory, compute), as a roofline has it, and not their sum, which
// would charge a decode step its FLOPs on top of the weights it is bound by.
enum class StepTerm : std::size_t {
  kWeights,         // weight bytes read (MoE: the experts the step's tokens touch) / HBM bandwidth
  kLinearFlops,     // 2 * active parameters * tokens / peak FLOP/s, the unhidden share
  kKvReads,         // KV-cache bytes read (decode contexts, a chunk's cached prefix) / HBM bandwidth
  kAttentionFlops,  // prefill attention, quadratic in each prompt / peak FLOP/s, the unhidden share
  kAllReduceBytes,  // tensor-parallel ring all-reduce traffic / one-way NVLink bandwidth
  kAllReduces,      // all-reduces (2 per layer under TP > 1), microseconds each
  kLayers,          // layers, microseconds each (kernel launches)
  kSequences,       // sequences in the step, microseconds each (sampling, bookkeeping)
  kStep,            // one per step, microseconds (scheduling)
};
inline constexpr std::size_t kStepTermCount = 9;
// Names as the catalog (configs/step_model.json) and `meshsim calibrate` write them.
inline constexpr std::array<std::string_view, kStepTermCount> kStepTermNames = {
    "weights", "linear_flops", "kv_reads", "attention_flops", "allreduce_bytes",
    "allreduce_us", "layer_us", "sequence_us", "step_us"};

using StepFeatures = std::array<double, kStepTermCount>;

// What a deployment's step time is fitted on (per SKU, so it carries to models and TP
// degrees it was not fitted on), and what a request costs outside the engine.
struct StepCoefficients {
  StepFeatures step = {1, 1, 1, 1, 1, 0, 0, 0, 0};
  RequestCosts request;
};

// What one engine step computes, in real numbers (a calibration prices mean steps).
struct StepContents {
  double prefill_tokens = 0, prefill_sequences = 0;
  double squared_tokens = 0;   // as PrefillWork's
  double prefill_context = 0;  // cached tokens the chunks attend to
  double decode_batch = 0, decode_context = 0;
};

// The terms of one engine step of `model` at `tensor_parallel` on `sku`, all at the
// hardware's peak rates (the FLOP terms whole).
StepFeatures peak_step_terms(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                             const StepContents& step);
// The share of a step's compute (seconds at peak) not hidden under its memory reads
// (seconds at peak bandwidth): max(0, 1 - memory / compute).
inline double unhidden_compute_share(double memory_s, double compute_s) {
  return compute_s > memory_s ? 1.0 - memory_s / compute_s : 0.0;
}
// peak_step_terms with the FLOP terms scaled by their unhidden share: what the
// coefficients multiply.
StepFeatures step_features(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                           const StepContents& step);

// An engine step's time is coefficients . step_features: vLLM-style steps (a chunk of
// prefill and the decodes in one forward pass). The constructor reads the peak terms'
// rates off peak_step_terms at unit steps (so the formula keeps one home) and folds the
// coefficients of the terms affine in the step's contents into a price per token,
// sequence and step: a step costs a few multiply-adds, since it is priced once per
// simulated iteration.
class StepTimeModel final : public PerfModel {
 public:
  StepTimeModel(ModelSpec model, SkuSpec sku, std::uint32_t tensor_parallel, StepCoefficients coefficients);
  double prefill_ms(const PrefillWork& work) const override { return iteration_ms(work, {}); }
  double decode_ms(const DecodeWork& work) const override { return iteration_ms({}, work); }
  double iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const override;
  RequestCosts request_costs() const override { return c_.request; }

 private:
  // Seconds at peak bandwidth of the weights read by a step of `tokens` tokens (> 0): a MoE
  // model's depend on the tokens (the experts they touch), a dense model's are
  // dense_weights_s_.
  double weights_s(double tokens) const;
  double seconds(const StepContents& step) const;

  ModelSpec model_;
  SkuSpec sku_;
  std::uint32_t tp_;
  StepCoefficients c_;
  // Peak-rate seconds per token of linear FLOPs, per attention pair unit and per KV token read.
  double flops_per_token_ = 0, flops_per_squared_token_ = 0, kv_per_token_ = 0;
  // The other terms priced: seconds per token, per sequence and per non-empty step.
  double per_token_ = 0, per_sequence_ = 0, per_step_ = 0;
  double dense_weights_s_ = 0;
};

}  // namespace meshsim::cluster
