#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/perf/hardware.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

using engine::SimTime;

// One prefill pass: `sequences` prompts (or chunks of prompts) totalling `tokens`. A
// chunk of t tokens after c tokens already in KV (earlier chunks, prefix-cache hits)
// attends to c + t tokens: `squared_tokens` sums (c + t)^2 - c^2 (a whole prompt's t^2, so
// attention cost grows with the square of each prompt), `context_tokens` sums c (KV read).
struct PrefillWork {
  std::uint64_t tokens = 0;
  std::uint32_t sequences = 0;
  double squared_tokens = 0.0;
  std::uint64_t context_tokens = 0;
};

// The longest iteration a performance model may price (about 11.6 days); longer is an
// error in its figures (RangeError), not a time to simulate.
inline constexpr double kMaxIterationMs = 1e9;

// One decode iteration: `batch` sequences each producing one token, reading
// `context_tokens` of KV cache in total.
struct DecodeWork {
  std::uint32_t batch = 0;
  std::uint64_t context_tokens = 0;
};

// What a request costs outside the engine's steps: the API server's parsing and
// tokenisation before it queues. (vLLM v1 detokenises in the API process while the engine
// runs its next step, so that cost is inside the measured time between tokens.)
struct RequestCosts {
  double pre_queue_ms = 0.0;
  double pre_queue_us_per_prompt_token = 0.0;

  double pre_queue_s(std::uint32_t prompt_tokens) const {
    return pre_queue_ms * 1e-3 + pre_queue_us_per_prompt_token * 1e-6 * prompt_tokens;
  }
};

// How long work takes on one serving instance (a model at a tensor-parallel degree on a
// SKU). Implementations are pure functions of their inputs.
class PerfModel {
 public:
  virtual ~PerfModel() = default;
  virtual double prefill_ms(const PrefillWork& work) const = 0;
  virtual double decode_ms(const DecodeWork& work) const = 0;
  // One iteration of a continuous batch: prompts being prefilled and sequences decoding
  // together (either may be empty).
  virtual double iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const = 0;
  virtual RequestCosts request_costs() const { return {}; }
};

// The fitted factors of a roofline (configs/perf_fits.json; `meshsim calibrate` fits
// them to a profile).
struct RooflineFactors {
  // prefill = overhead + max(weights / (tp * bandwidth),
  //                          flops / (tp * peak * efficiency) * (1 + tokens / knee))
  double prefill_overhead_ms = 30.0;
  double prefill_efficiency = 0.4;
  double prefill_knee_tokens = 50'000.0;  // efficiency halves at this many tokens in flight
  // decode = overhead + (weights + KV read) / (tp * bandwidth * memory_efficiency)
  //                   + flops / (tp * peak * compute_efficiency)
  double decode_overhead_ms = 20.0;
  double decode_memory_efficiency = 0.6;
  double decode_compute_efficiency = 0.15;
};

// A roofline model: compute-bound prefill whose efficiency falls as the pass grows
// (activation traffic), bandwidth-bound decode that reads the weights and every
// sequence's KV cache (so it grows with context length), plus the arithmetic of the
// batch, and fixed per-pass overheads (kernel launches, tensor-parallel all-reduces).
class RooflinePerfModel final : public PerfModel {
 public:
  RooflinePerfModel(ModelSpec model, SkuSpec sku, std::uint32_t tensor_parallel, RooflineFactors factors);
  double prefill_ms(const PrefillWork& work) const override;
  double decode_ms(const DecodeWork& work) const override;
  // A mixed batch is a prefill pass in which each decoding sequence adds one token that
  // attends to its whole context.
  double iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const override;

 private:
  ModelSpec model_;
  SkuSpec sku_;
  double tp_;
  RooflineFactors f_;
};

// SplitwiseSim's table backend: a measured time per number of batch tokens, median of the
// profile rows, interpolated linearly and extrapolated linearly beyond the ends.
class PiecewiseLinear {
 public:
  PiecewiseLinear() = default;
  // Points sorted by x, distinct x, at least two.
  explicit PiecewiseLinear(std::vector<std::pair<double, double>> points);
  double operator()(double x) const;
  bool empty() const { return points_.empty(); }

 private:
  std::vector<std::pair<double, double>> points_;
};

class TablePerfModel final : public PerfModel {
 public:
  // SplitwiseSim prices a mixed batch as a prefill of all its tokens times this factor.
  static constexpr double kMixedBatchFactor = 1.1;

  // prefill: ms by batch tokens (prompt_size * batch_size); decode: ms by batch size.
  TablePerfModel(PiecewiseLinear prefill_by_tokens, PiecewiseLinear decode_by_batch)
      : prefill_(std::move(prefill_by_tokens)), decode_(std::move(decode_by_batch)) {}
  double prefill_ms(const PrefillWork& work) const override {
    return prefill_(static_cast<double>(work.tokens));
  }
  // SplitwiseSim's table ignores context length: the time depends on the batch only.
  double decode_ms(const DecodeWork& work) const override { return decode_(work.batch); }
  double iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const override {
    if (prefill.tokens == 0) return decode_ms(decode);
    if (decode.batch == 0) return prefill_ms(prefill);
    return prefill_(static_cast<double>(prefill.tokens + decode.batch)) * kMixedBatchFactor;
  }

 private:
  PiecewiseLinear prefill_;
  PiecewiseLinear decode_;
};

// Every iteration takes a fixed time, whatever its size: prefill_ms with prompts in it,
// plus decode_ms with decoding sequences. For scripted what-if studies and scenario
// scripts whose timings must be worked out by hand (a request's length is then its
// output tokens times decode_ms).
class ConstantPerfModel final : public PerfModel {
 public:
  ConstantPerfModel(double prefill_ms, double decode_ms) : prefill_(prefill_ms), decode_(decode_ms) {}
  double prefill_ms(const PrefillWork&) const override { return prefill_; }
  double decode_ms(const DecodeWork&) const override { return decode_; }
  double iteration_ms(const PrefillWork& prefill, const DecodeWork& decode) const override {
    return (prefill.tokens > 0 ? prefill_ : 0.0) + (decode.batch > 0 ? decode_ : 0.0);
  }

 private:
  double prefill_;
  double decode_;
};

}  // namespace meshsim::cluster
