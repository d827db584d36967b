#include "sim/cluster/serving_hardware.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/batching/batching_options.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::cluster {

void InstanceHardware::refuse_price(const PrefillWork& prefill, const DecodeWork& decode, double ms) {
  throw RangeError("the performance model prices an iteration (" + std::to_string(prefill.tokens) +
                   " prompt tokens, " + std::to_string(decode.batch) + " decoding sequences) at " + number_text(ms) +
                   " ms, outside [0, " + number_text(kMaxIterationMs) +
                   "] ms: check the deployment's hardware, model and performance figures");
}

ServingHardware::ServingHardware(const LlmClusterConfig& config) {
  MESHSIM_CHECK(config.perf != nullptr, "LlmCluster needs a performance model");
  of_pool_.fill(add(config, config.sku, config.tensor_parallel, config.perf));
  std::array<bool, 3> own{};
  for (const PoolHardware& pool : config.pool_hardware) {
    const auto tag = static_cast<std::size_t>(pool.tag);
    MESHSIM_CHECK(!std::exchange(own[tag], true),
                  "pool_hardware names the " + std::string(kInstanceTagNames.name(pool.tag)) + " pool twice");
    of_pool_[tag] = add(config, pool.sku, pool.tensor_parallel, pool.perf);
  }
}

std::uint64_t instance_kv_tokens(const ServingOptions& options, const ModelSpec& model, const SkuSpec& sku,
                                 std::uint32_t tensor_parallel) {
  if (options.kv_capacity_tokens) return usable_kv_tokens(options, *options.kv_capacity_tokens);
  const double hbm = tensor_parallel * sku.hbm_gib_per_gpu * 1024.0 * 1024.0 * 1024.0;
  const double free_tokens = (hbm * (1.0 - options.kv_reserve_fraction) - model.weight_bytes()) / model.kv_bytes_per_token();
  // Beyond 2^53 tokens (petabytes of HBM per instance) the count is no longer exact.
  return free_tokens >= 1 ? usable_kv_tokens(options, static_cast<std::uint64_t>(std::min(free_tokens, 9e15))) : 0;
}

// The index of the hardware of this SKU and TP degree, added if new.
std::uint32_t ServingHardware::add(const LlmClusterConfig& config, const SkuSpec& sku, std::uint32_t tensor_parallel,
                                   std::shared_ptr<const PerfModel> perf) {
  for (std::uint32_t i = 0; i < kinds_.size(); ++i) {
    if (kinds_[i].sku.name == sku.name && kinds_[i].tensor_parallel == tensor_parallel) return i;
  }
  MESHSIM_CHECK(perf != nullptr, "LlmCluster needs a performance model for " + sku.name);
  MESHSIM_CHECK(tensor_parallel > 0 && sku.gpus_per_node % tensor_parallel == 0,
                "the tensor-parallel degree must divide the GPUs per node of " + sku.name);
  InstanceHardware hw;
  hw.sku = sku;
  hw.tensor_parallel = tensor_parallel;
  hw.perf = std::move(perf);
  hw.per_server = sku.gpus_per_node / tensor_parallel;
  const double kv_per_token = config.model.kv_bytes_per_token();
  hw.kv_capacity_tokens = instance_kv_tokens(config, config.model, sku, tensor_parallel);
  hw.engine = config;
  hw.engine.vllm.host_kv = config.vllm.host_kv.for_instance(kv_per_token, tensor_parallel);
  MESHSIM_CHECK(hw.kv_capacity_tokens > 0, "the model's weights leave no HBM for the KV cache on " + sku.name);
  const double flops_per_ns = tensor_parallel * sku.peak_tflops * 1e3;
  const double bytes_per_ns = tensor_parallel * sku.hbm_tb_per_s * 1e3;
  hw.per_token_ns = 2.0 * config.model.parameters / (tensor_parallel * linear_peak_tflops(sku, config.model) * 1e3);
  hw.per_attention_pair_ns = 4.0 * config.model.layers * config.model.attention_width() / flops_per_ns;
  hw.weights_ns = config.model.weight_bytes() / bytes_per_ns;
  hw.per_kv_token_ns = kv_per_token / bytes_per_ns;
  kinds_.push_back(std::move(hw));
  return static_cast<std::uint32_t>(kinds_.size() - 1);
}

}  // namespace meshsim::cluster
