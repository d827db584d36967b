#include "configs/hf_architecture.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace meshsim::configs {
namespace {

using nlohmann::json;

// Families whose MLP has two matrices (up and down projections), not three.
const std::set<std::string> kUngatedMlp = {"gpt2",  "gpt_neox", "gptj", "gpt_bigcode", "opt",
                                           "falcon", "bloom",   "phi",  "starcoder2",  "mpt", "codegen"};
// Encoder-only and encoder-decoder families.
const std::set<std::string> kNotDecoderOnly = {
    "bert", "roberta", "xlm-roberta", "deberta", "deberta-v2", "distilbert", "electra", "albert", "modernbert",
    "t5", "mt5", "umt5", "longt5", "bart", "mbart", "pegasus", "marian", "whisper", "led", "m2m_100",
    "encoder-decoder", "switch_transformers", "nllb-moe"};
// State-space, recurrent and hybrid families: not (only) transformers.
const std::set<std::string> kNotTransformers = {
    "mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "falcon_h1", "bamba", "nemotron_h",
    "granitemoehybrid", "rwkv", "rwkv5", "rwkv6", "recurrent_gemma", "lfm2", "plamo2", "xlstm"};

std::string names(const std::set<std::string>& set) {
  std::string out;
  for (const auto& name : set) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// vLLM's default max_model_len for a config: max_position_embeddings, stretched by a
// rope_scaling factor unless the scaling kind already counts it (llama3, longrope, su;
// yarn stretches original_max_position_embeddings). 0 when the config names no length.
Expected<std::uint32_t> context_tokens(const json& c) {
  const auto positive = [&](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() > 0; };
  const auto it = c.find("max_position_embeddings");
  if (it == c.end() || it->is_null()) return std::uint32_t{0};
  const Error bad_length{"max_position_embeddings: expected a positive integer below 2^32"};
  const Error bad_rope{"rope_scaling: expected an object with a positive factor (and for yarn a positive "
                       "original_max_position_embeddings)"};
  if (!positive(*it) || it->get<std::uint64_t>() >= (1ull << 32)) return bad_length;
  double tokens = static_cast<double>(it->get<std::uint64_t>());
  const auto rope = c.find("rope_scaling");
  if (rope != c.end() && !rope->is_null()) {
    if (!rope->is_object()) return bad_rope;
    const json& r = *rope;
    // Transformers writes the kind as rope_type (older configs: type); one that is not a
    // name cannot be read as the linear default.
    const char* kind_key = r.contains("rope_type") ? "rope_type" : r.contains("type") ? "type" : nullptr;
    if (kind_key != nullptr && !r[kind_key].is_string()) {
      return Error{std::string("rope_scaling.") + kind_key + ": expected the scaling's name (a string), got " +
                   r[kind_key].dump()};
    }
    const std::string kind = kind_key == nullptr ? "" : r[kind_key].get<std::string>();
    if (kind != "llama3" && kind != "longrope" && kind != "su" && kind != "default") {
      const auto factor = r.find("factor");
      if (factor == r.end() || !factor->is_number() || !(factor->get<double>() > 0)) return bad_rope;
      if (kind == "yarn" && r.contains("original_max_position_embeddings")) {
        if (!positive(r["original_max_position_embeddings"])) return bad_rope;
        tokens = static_cast<double>(r["original_max_position_embeddings"].get<std::uint64_t>());
      }
      tokens *= factor->get<double>();
    }
  }
  if (!(tokens < 4294967296.0)) return bad_length;
  return static_cast<std::uint32_t>(tokens);
}

// The weights' precision from quantization_config: fp8 or an error naming the format.
Expected<cluster::Precision> weight_precision(const json& c) {
  const auto it = c.find("quantization_config");
  if (it == c.end() || it->is_null()) return cluster::Precision::k16Bit;
  const std::string unsupported = ": meshsim serves 16-bit or fp8 weights";
  if (!it->is_object()) return Error{"quantization_config: expected an object, got " + it->dump()};
  const json& q = *it;
  if (!q.contains("quant_method") || !q["quant_method"].is_string()) {
    return Error{"quantization_config.quant_method: expected the format's name (a string)"};
  }
  const std::string method = q["quant_method"].get<std::string>();
  if (method == "fp8" || method == "fbgemm_fp8") return cluster::Precision::kFp8;
  if (method == "modelopt") {
    const std::string algo = q.value("quant_algo", json("")).is_string() ? q.value("quant_algo", "") : "";
    if (algo == "FP8") return cluster::Precision::kFp8;
    return Error{"quantization_config.quant_algo: '" + algo + "' weights are not modelled" + unsupported};
  }
  if (method == "compressed-tensors") {
    // Every group's weights must be 8-bit floats.
    const auto groups = q.find("config_groups");
    bool fp8 = groups != q.end() && groups->is_object() && !groups->empty();
    if (fp8) {
      for (const auto& [name, group] : groups->items()) {
        const json* w = group.is_object() && group.contains("weights") ? &group["weights"] : nullptr;
        fp8 = fp8 && w != nullptr && w->is_object() && w->value("num_bits", json(0)) == 8 &&
              w->value("type", json("")) == "float";
      }
    }
    if (fp8) return cluster::Precision::kFp8;
    return Error{"quantization_config.config_groups: weights other than 8-bit floats are not modelled" + unsupported};
  }
  return Error{"quantization_config.quant_method: '" + method + "' weights (integer or 4-bit) are not modelled" +
               unsupported};
}

}  // namespace

Expected<cluster::ModelSpec> model_from_hf_json(const json& config, const std::string& hf_id) {
  if (!config.is_object()) return Error{"expected a JSON object (a Hugging Face config.json)"};
  // A multimodal model's language model is its text_config.
  const bool nested = config.contains("text_config") && config["text_config"].is_object() &&
                      !config.contains("hidden_size") && !config.contains("num_hidden_layers");
  const json& c = nested ? config["text_config"] : config;
  const std::string prefix = nested ? "text_config." : "";
  const auto fail = [&](const std::string& key, const std::string& what) { return Error{prefix + key + ": " + what}; };

  // The optional text and flag fields, typed: a mistyped one is named, never cast.
  for (const char* key : {"model_type", "torch_dtype", "dtype"}) {
    if (c.contains(key) && !c[key].is_null() && !c[key].is_string()) {
      return fail(key, "expected a string, got " + c[key].dump());
    }
  }
  for (const char* key : {"tie_word_embeddings", "is_encoder_decoder", "attention_bias", "multi_query"}) {
    if (c.contains(key) && !c[key].is_null() && !c[key].is_boolean()) {
      return fail(key, "expected true or false, got " + c[key].dump());
    }
  }
  const std::string family = c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "";
  if (c.value("is_encoder_decoder", json(false)) == true || kNotDecoderOnly.count(family)) {
    return fail(c.value("is_encoder_decoder", json(false)) == true ? "is_encoder_decoder" : "model_type",
                "'" + family + "' is not a decoder-only transformer (encoder-only or encoder-decoder): " +
                    "meshsim serves decoder-only LLMs (not " + names(kNotDecoderOnly) + ")");
  }
  if (kNotTransformers.count(family) || c.contains("ssm_cfg") || c.contains("mamba_d_state")) {
    return fail("model_type", "'" + family + "' is a state-space, recurrent or hybrid model, not a transformer "
                              "(not " + names(kNotTransformers) + ")");
  }
  if (const auto a = c.find("architectures"); a != c.end() && !a->is_null()) {
    if (!a->is_array() || !std::all_of(a->begin(), a->end(), [](const json& x) { return x.is_string(); })) {
      return fail("architectures", "expected a list of class names");
    }
    const auto causal = [](const json& x) {
      const std::string n = x.get<std::string>();
      const auto ends = [&](const std::string& tail) {
        return n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0;
      };
      return ends("ForCausalLM") || ends("LMHeadModel") || ends("ForConditionalGeneration");
    };
    if (!a->empty() && std::none_of(a->begin(), a->end(), causal)) {
      return fail("architectures", "expected a causal language model (a ...ForCausalLM class), got " + a->dump());
    }
  }

  // The first of `keys` present and not null: a positive integer (0 too when `zero_ok`),
  // else the first bad key is kept for the error.
  std::string bad;
  const auto number = [&](std::initializer_list<const char*> keys, std::optional<std::uint64_t> fallback,
                          bool zero_ok = false) -> std::uint64_t {
    for (const char* key : keys) {
      const auto it = c.find(key);
      if (it == c.end() || it->is_null()) continue;
      // A whole number of JSON (parsed files hold non-negative ones as unsigned).
      const bool fits = it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
                        it->get<std::uint64_t>() < (1ull << 32);
      if (!fits || (!zero_ok && it->get<std::uint64_t>() == 0)) {
        if (bad.empty()) bad = key;
        return 0;
      }
      return it->get<std::uint64_t>();
    }
    if (!fallback && bad.empty()) bad = *keys.begin();
    return fallback.value_or(0);
  };
  const std::uint64_t hidden = number({"hidden_size", "n_embd", "d_model"}, std::nullopt);
  const std::uint64_t layers = number({"num_hidden_layers", "n_layer", "num_layers"}, std::nullopt);
  const std::uint64_t heads = number({"num_attention_heads", "n_head"}, std::nullopt);
  const bool multi_query = c.value("multi_query", json(false)) == true;
  const std::uint64_t kv_heads =
      number({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, multi_query ? 1 : heads == 0 ? 1 : heads);
  const std::uint64_t vocab = number({"vocab_size"}, std::nullopt);
  const bool gated = !kUngatedMlp.count(family);
  const std::uint64_t intermediate =
      number({"intermediate_size", "n_inner", "ffn_dim"}, gated ? std::nullopt : std::optional(4 * hidden));
  const std::uint64_t experts =
      number({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, 0, true);
  const std::uint64_t experts_per_token =
      experts ? number({"num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_top_k"},
                       std::nullopt)
              : 0;
  const std::uint64_t expert_width = experts ? number({"moe_intermediate_size"}, intermediate) : 0;
  // Shared experts: a count of routed-width experts, or one expert of its own width.
  const std::uint64_t shared_width =
      experts ? number({"n_shared_experts"}, 0, true) * expert_width +
                    number({"shared_expert_intermediate_size", "shared_intermediate_size"}, 0, true)
              : 0;
  const bool mla = c.contains("kv_lora_rank") && !c["kv_lora_rank"].is_null();
  const std::uint64_t kv_lora = mla ? number({"kv_lora_rank"}, std::nullopt) : 0;
  const std::uint64_t rope_dim = mla ? number({"qk_rope_head_dim"}, std::nullopt) : 0;
  const std::uint64_t nope_dim = mla ? number({"qk_nope_head_dim"}, std::nullopt) : 0;
  const std::uint64_t v_dim = mla ? number({"v_head_dim"}, std::nullopt) : 0;
  const std::uint64_t q_lora = mla ? number({"q_lora_rank"}, 0, true) : 0;
  if (!bad.empty()) return fail(bad, "expected a positive integer");
  std::uint64_t head_dim = nope_dim + rope_dim;  // MLA's query and key heads
  if (!mla) {
    const bool divides = hidden % heads == 0;
    head_dim = number({"head_dim"}, divides ? std::optional(hidden / heads) : std::nullopt);
    if (!bad.empty()) {
      return fail("head_dim", divides ? "expected a positive integer"
                                      : "expected a positive integer (hidden_size is not a multiple of "
                                        "num_attention_heads, so the config must give it)");
    }
  }
  if (kv_heads > heads || heads % kv_heads != 0) {
    return fail("num_key_value_heads", "expected a divisor of num_attention_heads (" + std::to_string(heads) + ")");
  }
  if (experts_per_token > experts) return fail("num_experts_per_tok", "expected at most the routed experts");

  // Which layers route to experts: all but the leading dense ones (first_k_dense_replace),
  // those listed dense (mlp_only_layers) and, with a sparse step k, all but every k-th.
  std::uint64_t moe_layers = 0;
  if (experts) {
    const std::uint64_t first_dense = number({"first_k_dense_replace"}, 0, true);
    const std::uint64_t step = number({"decoder_sparse_step", "moe_layer_freq"}, 1);
    if (!bad.empty()) return fail(bad, "expected a positive integer");
    std::set<std::uint64_t> dense_listed;
    if (const auto only = c.find("mlp_only_layers"); only != c.end() && !only->is_null()) {
      if (!only->is_array() || !std::all_of(only->begin(), only->end(), [](const json& x) { return x.is_number_integer() && x.get<std::int64_t>() >= 0; })) {
        return fail("mlp_only_layers", "expected a list of layer indices");
      }
      for (const json& x : *only) dense_listed.insert(x.get<std::uint64_t>());
    }
    for (std::uint64_t i = 0; i < layers; ++i) {
      moe_layers += i >= first_dense && (i + 1) % step == 0 && !dense_listed.count(i);
    }
  }
  auto context = context_tokens(c);
  if (!context) return Error{prefix + context.error().message};
  const std::string dtype = c.contains("torch_dtype") && c["torch_dtype"].is_string() ? c["torch_dtype"].get<std::string>()
                            : c.contains("dtype") && c["dtype"].is_string()       ? c["dtype"].get<std::string>()
                                                                                  : "bfloat16";
  if (dtype != "bfloat16" && dtype != "float16" && dtype != "float32") {
    return fail(c.contains("torch_dtype") ? "torch_dtype" : "dtype",
                "expected bfloat16, float16 or float32, got '" + dtype + "'");
  }
  auto weights = weight_precision(c);
  if (!weights) return Error{prefix + weights.error().message};

  const double h = double(hidden);
  double attention;
  if (mla) {
    const double qk = double(heads) * double(nope_dim + rope_dim);
    const double q = q_lora ? h * double(q_lora) + double(q_lora) + double(q_lora) * qk : h * qk;
    const double kv = h * double(kv_lora + rope_dim) + double(kv_lora) + double(kv_lora) * double(heads) * double(nope_dim + v_dim);
    attention = q + kv + double(heads) * double(v_dim) * h;
  } else {
    const double q = double(heads * head_dim), kv = double(kv_heads * head_dim);
    attention = h * q + 2.0 * h * kv + q * h;
    if (family == "qwen2" || family == "qwen2_moe") attention += q + 2.0 * kv;  // q, k, v biases
    if (c.value("attention_bias", json(false)) == true) attention += q + 2.0 * kv + h;
  }
  const double matrices = gated ? 3.0 : 2.0;
  const double dense_mlp = matrices * h * double(intermediate);
  const double expert = 3.0 * h * double(expert_width);
  const double norms = 2.0 * h;
  const bool tied = c.value("tie_word_embeddings", json(false)) == true;
  const double embeddings = double(vocab) * h * (tied ? 1.0 : 2.0);

  cluster::ModelSpec m;
  m.name = hf_id;
  m.hf_id = hf_id;
  m.layers = static_cast<std::uint32_t>(layers);
  m.hidden = static_cast<std::uint32_t>(hidden);
  m.heads = static_cast<std::uint32_t>(heads);
  m.kv_heads = static_cast<std::uint32_t>(mla ? heads : kv_heads);
  m.head_size = static_cast<std::uint32_t>(head_dim);
  m.latent_kv_width = static_cast<std::uint32_t>(mla ? kv_lora + rope_dim : 0);
  m.max_context_tokens = *context;
  m.dtype_bytes = 2;
  m.weights = *weights;
  const double dense_layers = double(layers - moe_layers);
  m.parameters = double(layers) * (attention + norms) + dense_layers * dense_mlp + embeddings + h;
  if (experts > 0 && moe_layers > 0) {
    m.experts = static_cast<std::uint32_t>(experts);
    m.experts_per_token = static_cast<std::uint32_t>(experts_per_token);
    m.expert_parameters = double(moe_layers) * double(experts) * expert;
    const double router = h * double(experts);
    m.parameters += double(moe_layers) * (router + 3.0 * h * double(shared_width)) + m.expert_parameters;
  }
  return m;
}

}  // namespace meshsim::configs
