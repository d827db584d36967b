#include "sim/autoscale/oracle.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::autoscale {

OracleAutoscaler::OracleAutoscaler(OracleConfig config, std::vector<InstanceTag> pools,
                                   std::unique_ptr<traces::RequestSource> lookahead)
    : config_(config), pools_(std::move(pools)), lookahead_(std::move(lookahead)) {}

OracleAutoscaler::Demand OracleAutoscaler::demand(SimTime from) {
  Demand d;
  const SimTime end = from + config_.window;
  while (!exhausted_) {
    if (!next_) {
      auto read = lookahead_->next();
      // The replay reads the same stream and reports its errors; the oracle just stops.
      if (!read || !read->has_value()) {
        exhausted_ = true;
        break;
      }
      next_ = std::move(**read);
    }
    if (next_->arrival >= end) break;
    if (next_->arrival >= from) {
      ++d.requests;
      d.prompt_tokens += next_->prompt_tokens;
      d.output_tokens += next_->output_tokens;
    }
    next_.reset();
  }
  return d;
}

std::uint32_t OracleAutoscaler::size_for(const Demand& d, InstanceTag pool, const cluster::ScalingView& view) const {
  if (d.requests == 0) return 1;
  const cluster::PerfModel& perf = *view.hardware(pool).perf;
  const double mean_prompt = static_cast<double>(d.prompt_tokens) / static_cast<double>(d.requests);
  const double mean_output = static_cast<double>(d.output_tokens) / static_cast<double>(d.requests);
  // Prefill rate at the mean prompt, tokens per second.
  cluster::PrefillWork prefill;
  prefill.tokens = static_cast<std::uint64_t>(std::max(1.0, std::round(mean_prompt)));
  prefill.sequences = 1;
  prefill.squared_tokens = static_cast<double>(prefill.tokens) * static_cast<double>(prefill.tokens);
  const double prefill_rate = static_cast<double>(prefill.tokens) / std::max(1e-6, perf.prefill_ms(prefill)) * 1e3;
  // Decode: the largest batch within the TBT target whose KV fits (context: the prompt
  // and half the output on average).
  const double context = mean_prompt + mean_output / 2;
  const auto kv_batch = static_cast<std::uint32_t>(
      std::max(1.0, static_cast<double>(view.hardware(pool).kv_capacity_tokens) / (mean_prompt + mean_output)));
  const std::uint32_t limit = std::min(view.batching().max_batch_size, kv_batch);
  const auto step_ms = [&](std::uint32_t batch) {
    return perf.decode_ms(cluster::DecodeWork{batch, static_cast<std::uint64_t>(batch * context)});
  };
  std::uint32_t low = 1, high = limit;  // decode time grows with the batch: bisect
  while (low < high) {
    const std::uint32_t mid = low + (high - low + 1) / 2;
    if (step_ms(mid) <= config_.tbt_target.ms()) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  const double decode_rate = low / std::max(1e-6, step_ms(low)) * 1e3;
  const double window_s = config_.window.seconds();
  double work = 0.0;  // instance-seconds
  if (pool != InstanceTag::kToken) work += static_cast<double>(d.prompt_tokens) / prefill_rate;
  if (pool != InstanceTag::kPrompt) work += static_cast<double>(d.output_tokens) / decode_rate;
  const double instances = std::ceil(work / (window_s * config_.target_utilisation));
  return static_cast<std::uint32_t>(std::clamp(instances, 1.0, static_cast<double>(config_.max_instances)));
}

void OracleAutoscaler::decide(ScalingManager& manager) {
  const Demand d = demand(manager.view().now());
  for (const InstanceTag tag : pools_) scale_pool_to(manager, tag, size_for(d, tag, manager.view()));
}

}  // namespace meshsim::autoscale
