#pragma once

#include <cstdint>
#include <string>

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
};

// A transformer LLM (configs/models.json).
struct ModelSpec {
  std::string name;                  // e.g. "llama2-70b"
  double parameters = 0.0;           // count
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;          // model width
  std::uint32_t heads = 0;           // attention heads
  std::uint32_t kv_heads = 0;        // key/value heads (fewer than heads with GQA)
  std::uint32_t dtype_bytes = 2;     // bytes per weight and per KV element

  std::uint32_t head_dim() const { return heads ? hidden / heads : 0; }
  double weight_bytes() const { return parameters * dtype_bytes; }
  // K and V for one token across all layers.
  double kv_bytes_per_token() const {
    return 2.0 * layers * kv_heads * head_dim() * static_cast<double>(dtype_bytes);
  }
};

}  // namespace meshsim::cluster
