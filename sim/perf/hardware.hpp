#pragma once

#include <cstdint>
#include <cmath>
#include <string>
#include <vector>

namespace meshsim::cluster {

// A GPU server SKU (configs/hardware.json). Figures are per GPU unless named per node.
struct SkuSpec {
  std::string name;                  // e.g. "h100-80gb"
  std::uint32_t gpus_per_node = 8;
  double hbm_gib_per_gpu = 80.0;     // GiB
  double peak_tflops = 989.0;        // dense FP16/BF16 tensor TFLOP/s
  double hbm_tb_per_s = 3.35;        // TB/s
  double nvlink_gb_per_s = 900.0;    // GB/s per GPU, bidirectional total
  double network_gb_per_s = 50.0;    // GB/s per node (e.g. 400 Gb/s = 50 GB/s)
  double power_kw = 10.2;            // node, at full load
  double cost_per_hour = 0.0;        // USD per node-hour
  std::vector<std::string> aliases;  // other names for it (a reference file's "H100-SXM-80GB")
};

// A transformer LLM (configs/models.json).
struct ModelSpec {
  std::string name;                  // e.g. "llama2-70b"
  double parameters = 0.0;           // count, every expert included
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;          // model width
  std::uint32_t heads = 0;           // attention heads
  std::uint32_t kv_heads = 0;        // key/value heads (fewer than heads with GQA)
  std::uint32_t dtype_bytes = 2;     // bytes per weight and per KV element
  // Mixture of experts (0 experts: dense). `expert_parameters` counts the routed experts'
  // weights over all layers; the rest (attention, embeddings, dense layers, shared
  // experts) every token uses.
  std::string hf_id;  // Hugging Face name, e.g. "meta-llama/Llama-2-70b-hf" (may be empty)
  std::uint32_t experts = 0;
  std::uint32_t experts_per_token = 0;
  double expert_parameters = 0.0;
  // The longest sequence (prompt and output tokens) it was trained for: vLLM's default
  // max_model_len (from config.json's max_position_embeddings and rope scaling); 0 unknown.
  std::uint32_t max_context_tokens = 0;

  bool moe() const { return experts > 0; }
  // The parameters one token computes with.
  double active_parameters() const {
    return moe() ? parameters - expert_parameters * (1.0 - double(experts_per_token) / experts) : parameters;
  }
  // The weights a forward pass over `tokens` tokens reads: with uniform routing each
  // expert is missed by all tokens with probability (1 - k/E)^tokens.
  double weight_bytes_touched(double tokens) const {
    if (!moe()) return weight_bytes();
    const double touched = 1.0 - std::pow(1.0 - double(experts_per_token) / experts, tokens);
    return (parameters - expert_parameters + expert_parameters * touched) * dtype_bytes;
  }
  std::uint32_t head_dim() const { return heads ? hidden / heads : 0; }
  double weight_bytes() const { return parameters * dtype_bytes; }
  // K and V for one token across all layers.
  double kv_bytes_per_token() const {
    return 2.0 * layers * kv_heads * head_dim() * static_cast<double>(dtype_bytes);
  }
};

}  // namespace meshsim::cluster
