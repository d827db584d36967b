#pragma once

#include <cstdint>
#include <cmath>
#include <string>
#include <vector>

#include "sim/engine/enum_names.hpp"

namespace meshsim::cluster {

// How a model's weights or KV cache are stored and computed: 16-bit floats (bf16 or fp16)
// or 8-bit floats (fp8 e4m3, as vLLM serves an fp8 checkpoint or --kv-cache-dtype fp8).
enum class Precision : std::uint8_t { k16Bit, kFp8 };
inline constexpr EnumNames kPrecisionNames{std::array{
    std::pair{Precision::k16Bit, std::string_view("bf16")},
    std::pair{Precision::kFp8, std::string_view("fp8")},
}};
inline double bytes_of(Precision p) { return p == Precision::kFp8 ? 1.0 : 2.0; }

// A GPU server SKU (configs/hardware.json). Figures are per GPU unless named per node.
struct SkuSpec {
  std::string name;                  // e.g. "h100-80gb"
  std::uint32_t gpus_per_node = 8;
  double hbm_gib_per_gpu = 80.0;     // GiB
  double peak_tflops = 989.0;        // dense FP16/BF16 tensor TFLOP/s
  // Dense FP8 tensor TFLOP/s; 0: no FP8 tensor cores (A100), where fp8 weights are
  // widened to 16 bits to compute (vLLM's weight-only FP8 kernels).
  double peak_tflops_fp8 = 0.0;
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
  std::uint32_t dtype_bytes = 2;     // bytes per activation element (what an all-reduce sends)
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
  // Per attention head; 0: hidden / heads (Qwen3 and others set it apart).
  std::uint32_t head_size = 0;
  // Multi-head latent attention (DeepSeek): a token's K and V in every layer are one latent
  // vector of this many elements (kv_lora_rank + qk_rope_head_dim); 0: not MLA.
  std::uint32_t latent_kv_width = 0;
  Precision weights = Precision::k16Bit;
  Precision kv_cache = Precision::k16Bit;

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
    return (parameters - expert_parameters + expert_parameters * touched) * bytes_of(weights);
  }
  std::uint32_t head_dim() const { return head_size ? head_size : heads ? hidden / heads : 0; }
  // The width of the queries (and of the attention's scores and values per token).
  double attention_width() const { return double(heads) * head_dim(); }
  double weight_bytes() const { return parameters * bytes_of(weights); }
  // K and V for one token across all layers.
  double kv_bytes_per_token() const {
    const double per_layer = latent_kv_width ? double(latent_kv_width) : 2.0 * kv_heads * head_dim();
    return layers * per_layer * bytes_of(kv_cache);
  }
};

// The TFLOP/s a GPU runs a model's linear layers at: its FP8 peak for fp8 weights where it
// has FP8 tensor cores, else its 16-bit peak.
inline double linear_peak_tflops(const SkuSpec& sku, const ModelSpec& model) {
  return model.weights == Precision::kFp8 && sku.peak_tflops_fp8 > 0 ? sku.peak_tflops_fp8 : sku.peak_tflops;
}

}  // namespace meshsim::cluster
