#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/expected.hpp"
#include "sim/perf/hardware.hpp"

namespace meshsim::configs {

// A decoder-only transformer from its Hugging Face config.json, whatever its family: the
// fields that define its shape, under the names the families give them (hidden_size or
// n_embd, num_key_value_heads or multi_query, ...):
// - attention: heads, KV heads, head_dim (hidden / heads unless given), biases; DeepSeek's
//   multi-head latent attention (kv_lora_rank...), whose KV is one latent per token;
// - MLP: gated (gate, up, down) unless the family's is not (GPT-2, GPT-NeoX, Falcon...);
//   mixtures of experts (routed experts and their width, experts per token, shared
//   experts, leading dense layers, sparse steps);
// - context (max_position_embeddings stretched as vLLM stretches it), tied embeddings;
// - precision: fp8 weights from quantization_config (fp8, compressed-tensors or ModelOpt
//   in 8-bit floats), else 16-bit (vLLM serves float32 checkpoints in 16 bits too).
// A multimodal config's text_config is the model read. Refused, by name: what is not a
// decoder-only transformer (encoder-only, encoder-decoder, state-space or recurrent
// families) and weights in 4-bit or integer formats. Errors are "key: what was expected".
Expected<cluster::ModelSpec> model_from_hf_json(const nlohmann::json& config, const std::string& hf_id);

}  // namespace meshsim::configs
