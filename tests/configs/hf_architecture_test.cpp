// Any decoder-only transformer from its Hugging Face config.json (model_from_hf_json):
// the configs of the given vLLM benchmark table's models, and families written here from
// their published configs, against their model cards' parameter counts; what is not a
// decoder-only transformer, or not served in 16 or 8 bits, refused by name.
#include "configs/hf_architecture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;
using cluster::Precision;

cluster::ModelSpec read(const json& config) {
  auto model = model_from_hf_json(config, "acme/model");
  EXPECT_TRUE(model) << (model ? "" : model.error().message);
  return model ? *model : cluster::ModelSpec{};
}

std::string refusal(const json& config) {
  auto model = model_from_hf_json(config, "acme/model");
  return model ? std::string("accepted") : model.error().message;
}

json shared_config(const std::string& file) {
  std::ifstream in(std::string(MESHSIM_SHARED_DIR) + "/reference/gpu-skus/model_configs/" + file);
  return json::parse(in);
}

TEST(HfArchitectureTest, TheBenchmarkTablesModelsAreReadAsTheirCardsDescribeThem) {
  MESHSIM_NEED_SHARED_FILE(std::string(MESHSIM_SHARED_DIR) + "/reference/gpu-skus/model_configs/Qwen--Qwen3-32B.json");
  const auto llama = read(shared_config("meta-llama--Meta-Llama-3.1-70B.json"));
  EXPECT_NEAR(llama.parameters, 70.55e9, 0.05e9);  // "70B": 70.6e9 on the model card
  EXPECT_EQ(llama.max_context_tokens, 131072u);    // llama3 rope scaling counts itself
  EXPECT_EQ(llama.kv_bytes_per_token(), 2.0 * 80 * 8 * 128 * 2);
  EXPECT_EQ(llama.weights, Precision::k16Bit);

  // Qwen3: 64 heads of 128 over a width of 5120.
  const auto qwen = read(shared_config("Qwen--Qwen3-32B.json"));
  EXPECT_NEAR(qwen.parameters, 32.76e9, 0.05e9);  // "32.8B"
  EXPECT_EQ(qwen.head_dim(), 128u);
  EXPECT_EQ(qwen.attention_width(), 8192.0);
  EXPECT_EQ(qwen.kv_bytes_per_token(), 2.0 * 64 * 8 * 128 * 2);
  const auto qwen_fp8 = read(shared_config("Qwen--Qwen3-32B-FP8.json"));
  EXPECT_EQ(qwen_fp8.weights, Precision::kFp8);
  EXPECT_EQ(qwen_fp8.kv_cache, Precision::k16Bit);  // vLLM's KV stays 16-bit unless told
  EXPECT_EQ(qwen_fp8.weight_bytes(), qwen.weight_bytes() / 2);

  // MiniMax-M2.5: 256 experts of width 1536 in every layer, 8 per token, fp8.
  const auto minimax = read(shared_config("MiniMaxAI--MiniMax-M2.5.json"));
  EXPECT_NEAR(minimax.parameters, 228.7e9, 1e9);       // "229B"
  EXPECT_NEAR(minimax.active_parameters(), 11.0e9, 1.0e9);  // "10B active"
  EXPECT_EQ(minimax.experts, 256u);
  EXPECT_EQ(minimax.experts_per_token, 8u);
  EXPECT_EQ(minimax.weights, Precision::kFp8);
  EXPECT_EQ(minimax.head_dim(), 128u);
}

TEST(HfArchitectureTest, FamiliesNamedInOtherWordsAreReadToo) {
  // DeepSeek-V3: latent attention, 3 dense layers then 58 of 256 routed + 1 shared expert.
  const auto deepseek = read(json::parse(R"({
      "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
      "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
      "first_k_dense_replace": 3, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
      "max_position_embeddings": 163840, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
      "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
      "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}})"));
  EXPECT_NEAR(deepseek.parameters, 671e9, 2e9);           // "671B" (the MTP module not served)
  EXPECT_NEAR(deepseek.active_parameters(), 37.5e9, 1e9);  // "37B activated"
  EXPECT_EQ(deepseek.kv_bytes_per_token(), 61.0 * (512 + 64) * 2);  // one latent per token and layer
  EXPECT_EQ(deepseek.max_context_tokens, 163840u);
  EXPECT_EQ(deepseek.weights, Precision::kFp8);

  // Qwen1.5-MoE-A2.7B: 60 experts of 1408, 4 per token, one shared expert of 5632, q/k/v biases.
  const auto qwen_moe = read(json::parse(R"({
      "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
      "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
      "moe_intermediate_size": 1408, "num_experts": 60, "num_experts_per_tok": 4,
      "shared_expert_intermediate_size": 5632, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "vocab_size": 151936, "max_position_embeddings": 8192, "tie_word_embeddings": false})"));
  EXPECT_NEAR(qwen_moe.parameters, 14.3e9, 0.1e9);
  EXPECT_NEAR(qwen_moe.active_parameters(), 2.7e9, 0.1e9);

  // GPT-2: its own key names, an ungated MLP of 4 x width, tied embeddings.
  const auto gpt2 = read(json::parse(R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
      "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": null, "vocab_size": 50257, "n_positions": 1024,
      "tie_word_embeddings": true})"));
  EXPECT_NEAR(gpt2.parameters, 124e6, 1.5e6);  // its card: 124M (position embeddings and biases aside)

  // A multimodal config: the text_config is the language model read.
  const auto llava = read(json::parse(R"({"architectures": ["LlavaForConditionalGeneration"],
      "model_type": "llava", "vision_config": {"hidden_size": 1024}, "text_config": {"model_type": "llama",
      "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "intermediate_size": 14336, "vocab_size": 32064}})"));
  EXPECT_EQ(llava.layers, 32u);
  EXPECT_EQ(llava.kv_heads, 8u);

  // A family nobody listed, with the usual keys: accepted.
  const auto unknown = read(json::parse(R"({"model_type": "brand_new", "hidden_size": 1024,
      "num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 1000})"));
  EXPECT_EQ(unknown.kv_heads, 8u);  // no num_key_value_heads: one per head
  // A float32 checkpoint is served in 16 bits, as vLLM's dtype "auto" does.
  const auto fp32 = read(json::parse(R"({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
      "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 1000, "torch_dtype": "float32"})"));
  EXPECT_EQ(fp32.weight_bytes(), fp32.parameters * 2);
}

TEST(HfArchitectureTest, WhatIsNotADecoderOnlyTransformerOrNotIn16Or8BitsIsRefusedByName) {
  const json llama = json::parse(R"({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
      "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 4096, "vocab_size": 1000})");
  ASSERT_EQ(refusal(llama), "accepted");
  const auto with = [&](const json& patch) {
    json c = llama;
    c.merge_patch(patch);
    return refusal(c);
  };
  EXPECT_NE(with({{"model_type", "bert"}}).find("model_type: 'bert' is not a decoder-only transformer"),
            std::string::npos);
  EXPECT_NE(with({{"model_type", "t5"}, {"is_encoder_decoder", true}}).find("is_encoder_decoder: 't5'"),
            std::string::npos);
  EXPECT_NE(with({{"model_type", "mamba"}}).find("model_type: 'mamba' is a state-space"), std::string::npos);
  EXPECT_NE(with({{"architectures", {"BertForMaskedLM"}}}).find("architectures: expected a causal language model"),
            std::string::npos);
  EXPECT_NE(with({{"quantization_config", {{"quant_method", "awq"}, {"bits", 4}}}})
                .find("quantization_config.quant_method: 'awq' weights (integer or 4-bit) are not modelled"),
            std::string::npos);
  EXPECT_NE(with({{"quantization_config", {{"quant_method", "mxfp4"}}}}).find("'mxfp4'"), std::string::npos);
  EXPECT_NE(with({{"quantization_config", {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}}}})
                .find("quantization_config.quant_algo: 'NVFP4'"),
            std::string::npos);
  EXPECT_EQ(with({{"quantization_config", {{"quant_method", "compressed-tensors"},
                                            {"config_groups", {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}}}}}}}}}}),
            "accepted");
  EXPECT_NE(with({{"quantization_config", {{"quant_method", "compressed-tensors"},
                                            {"config_groups", {{"group_0", {{"weights", {{"num_bits", 4}, {"type", "int"}}}}}}}}}})
                .find("quantization_config.config_groups"),
            std::string::npos);
  // Shapes that do not add up, named by key.
  EXPECT_NE(with({{"num_key_value_heads", 3}}).find("num_key_value_heads: expected a divisor"), std::string::npos);
  EXPECT_NE(with({{"hidden_size", 1000}, {"num_attention_heads", 7}}).find("head_dim:"), std::string::npos);
  EXPECT_EQ(with({{"hidden_size", 1000}, {"num_attention_heads", 7}, {"num_key_value_heads", 7}, {"head_dim", 128}}),
            "accepted");
  EXPECT_NE(with({{"num_local_experts", 8}}).find("num_experts_per_tok: expected a positive integer"),
            std::string::npos);
  EXPECT_NE(with({{"intermediate_size", nullptr}}).find("intermediate_size: expected a positive integer"),
            std::string::npos);
  EXPECT_NE(with({{"num_hidden_layers", 4294967296ull}}).find("num_hidden_layers: expected a positive integer"),
            std::string::npos);
  // In a multimodal config the key is named in its text_config.
  const std::string nested = refusal(json{{"model_type", "llava"}, {"text_config", {{"model_type", "llama"}, {"hidden_size", 64}}}});
  EXPECT_NE(nested.find("text_config.num_hidden_layers"), std::string::npos) << nested;
}

}  // namespace
}  // namespace meshsim::configs
