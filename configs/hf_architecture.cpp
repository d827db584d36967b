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

// The optional text and flag fields typed (a mistyped one is named, never cast), and what is
// not a decoder-only transformer refused by name: the field to blame and why, or nothing.
std::optional<std::pair<std::string, std::string>> refusal(const json& c, const std::string& family) {
  for (const char* key : {"model_type", "torch_dtype", "dtype"}) {
    if (c.contains(key) && !c[key].is_null() && !c[key].is_string()) {
      return std::pair<std::string, std::string>{key, "expected a string, got " + c[key].dump()};
    }
  }
  for (const char* key : {"tie_word_embeddings", "is_encoder_decoder", "attention_bias", "multi_query"}) {
    if (c.contains(key) && !c[key].is_null() && !c[key].is_boolean()) {
      return std::pair<std::string, std::string>{key, "expected true or false, got " + c[key].dump()};
    }
  }
  if (c.value("is_encoder_decoder", json(false)) == true || kNotDecoderOnly.count(family)) {
    return std::pair<std::string, std::string>{
        c.value("is_encoder_decoder", json(false)) == true ? "is_encoder_decoder" : "model_type",
        "'" + family + "' is not a decoder-only transformer (encoder-only or encoder-decoder): " +
            "meshsim serves decoder-only LLMs (not " + names(kNotDecoderOnly) + ")"};
  }
  if (kNotTransformers.count(family) || c.contains("ssm_cfg") || c.contains("mamba_d_state")) {
    return std::pair<std::string, std::string>{
        "model_type", "'" + family + "' is a state-space, recurrent or hybrid model, not a transformer (not " +
                          names(kNotTransformers) + ")"};
  }
  if (const auto a = c.find("architectures"); a != c.end() && !a->is_null()) {
    if (!a->is_array() || !std::all_of(a->begin(), a->end(), [](const json& x) { return x.is_string(); })) {
      return std::pair<std::string, std::string>{"architectures", "expected a list of class names"};
    }
    const auto causal = [](const json& x) {
      const std::string n = x.get<std::string>();
      const auto ends = [&](const std::string& tail) {
        return n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0;
      };
      return ends("ForCausalLM") || ends("LMHeadModel") || ends("ForConditionalGeneration");
    };
    if (!a->empty() && std::none_of(a->begin(), a->end(), causal)) {
      return std::pair<std::string, std::string>{
          "architectures", "expected a causal language model (a ...ForCausalLM class), got " + a->dump()};
    }
  }
  return std::nullopt;
}

// Reads whole-number fields, keeping the first bad key for the error.
struct NumberFields {
  const json& c;
  std::string bad;
  // The first of `keys` present and not null: a positive integer (0 too when `zero_ok`), else
  // `fallback` (a key missing without one is bad).
  std::uint64_t get(std::initializer_list<const char*> keys, std::optional<std::uint64_t> fallback,
                    bool zero_ok = false) {
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
  }
};

// What defines a decoder's size, as the config gives it.
struct Shape {
  std::uint64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, vocab = 0, intermediate = 0, head_dim = 0;
  std::uint64_t experts = 0, experts_per_token = 0, expert_width = 0, shared_width = 0, moe_layers = 0;
  bool gated = true, mla = false;
  std::uint64_t kv_lora = 0, rope_dim = 0, nope_dim = 0, v_dim = 0, q_lora = 0;  // MLA's ranks and widths
};

// Which layers route to experts: all but the leading dense ones (first_k_dense_replace), those
// listed dense (mlp_only_layers) and, with a sparse step k, all but every k-th.
Expected<std::uint64_t> moe_layer_count(NumberFields& n, std::uint64_t layers) {
  const std::uint64_t first_dense = n.get({"first_k_dense_replace"}, 0, true);
  const std::uint64_t step = n.get({"decoder_sparse_step", "moe_layer_freq"}, 1);
  if (!n.bad.empty()) return Error{n.bad + ": expected a positive integer"};
  std::set<std::uint64_t> dense_listed;
  if (const auto only = n.c.find("mlp_only_layers"); only != n.c.end() && !only->is_null()) {
    const auto index = [](const json& x) { return x.is_number_integer() && x.get<std::int64_t>() >= 0; };
    if (!only->is_array() || !std::all_of(only->begin(), only->end(), index)) {
      return Error{"mlp_only_layers: expected a list of layer indices"};
    }
    for (const json& x : *only) dense_listed.insert(x.get<std::uint64_t>());
  }
  std::uint64_t moe_layers = 0;
  for (std::uint64_t i = 0; i < layers; ++i) moe_layers += i >= first_dense && (i + 1) % step == 0 && !dense_listed.count(i);
  return moe_layers;
}

// The shape's fields, each named when missing or of the wrong type.
Expected<Shape> read_shape(const json& c, const std::string& family) {
  NumberFields n{c, {}};
  Shape s;
  s.hidden = n.get({"hidden_size", "n_embd", "d_model"}, std::nullopt);
  s.layers = n.get({"num_hidden_layers", "n_layer", "num_layers"}, std::nullopt);
  s.heads = n.get({"num_attention_heads", "n_head"}, std::nullopt);
  const bool multi_query = c.value("multi_query", json(false)) == true;
  s.kv_heads = n.get({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, multi_query ? 1 : s.heads == 0 ? 1 : s.heads);
  s.vocab = n.get({"vocab_size"}, std::nullopt);
  s.gated = !kUngatedMlp.count(family);
  s.intermediate =
      n.get({"intermediate_size", "n_inner", "ffn_dim"}, s.gated ? std::nullopt : std::optional(4 * s.hidden));
  s.experts = n.get({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, 0, true);
  if (s.experts) {
    s.experts_per_token =
        n.get({"num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_top_k"}, std::nullopt);
    s.expert_width = n.get({"moe_intermediate_size"}, s.intermediate);
    // Shared experts: a count of routed-width experts, or one expert of its own width.
    s.shared_width = n.get({"n_shared_experts"}, 0, true) * s.expert_width +
                     n.get({"shared_expert_intermediate_size", "shared_intermediate_size"}, 0, true);
  }
  s.mla = c.contains("kv_lora_rank") && !c["kv_lora_rank"].is_null();
  if (s.mla) {
    s.kv_lora = n.get({"kv_lora_rank"}, std::nullopt);
    s.rope_dim = n.get({"qk_rope_head_dim"}, std::nullopt);
    s.nope_dim = n.get({"qk_nope_head_dim"}, std::nullopt);
    s.v_dim = n.get({"v_head_dim"}, std::nullopt);
    s.q_lora = n.get({"q_lora_rank"}, 0, true);
  }
  if (!n.bad.empty()) return Error{n.bad + ": expected a positive integer"};
  s.head_dim = s.nope_dim + s.rope_dim;  // MLA's query and key heads
  if (!s.mla) {
    const bool divides = s.hidden % s.heads == 0;
    s.head_dim = n.get({"head_dim"}, divides ? std::optional(s.hidden / s.heads) : std::nullopt);
    if (!n.bad.empty()) {
      return Error{divides ? "head_dim: expected a positive integer"
                           : "head_dim: expected a positive integer (hidden_size is not a multiple of "
                             "num_attention_heads, so the config must give it)"};
    }
  }
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0) {
    return Error{"num_key_value_heads: expected a divisor of num_attention_heads (" + std::to_string(s.heads) + ")"};
  }
  if (s.experts_per_token > s.experts) return Error{"num_experts_per_tok: expected at most the routed experts"};
  if (s.experts) {
    auto moe = moe_layer_count(n, s.layers);
    if (!moe) return moe.error();
    s.moe_layers = *moe;
  }
  return s;
}

// Parameters of one layer's attention (projections, and their biases where the family has them).
double attention_parameters(const json& c, const std::string& family, const Shape& s) {
  const double h = double(s.hidden);
  if (s.mla) {
    const double qk = double(s.heads) * double(s.nope_dim + s.rope_dim);
    const double q = s.q_lora ? h * double(s.q_lora) + double(s.q_lora) + double(s.q_lora) * qk : h * qk;
    const double kv = h * double(s.kv_lora + s.rope_dim) + double(s.kv_lora) +
                      double(s.kv_lora) * double(s.heads) * double(s.nope_dim + s.v_dim);
    return q + kv + double(s.heads) * double(s.v_dim) * h;
  }
  const double q = double(s.heads * s.head_dim), kv = double(s.kv_heads * s.head_dim);
  double attention = h * q + 2.0 * h * kv + q * h;
  if (family == "qwen2" || family == "qwen2_moe") attention += q + 2.0 * kv;  // q, k, v biases
  if (c.value("attention_bias", json(false)) == true) attention += q + 2.0 * kv + h;
  return attention;
}

}  // namespace

Expected<cluster::ModelSpec> model_from_hf_json(const json& config, const std::string& hf_id) {
  if (!config.is_object()) return Error{"expected a JSON object (a Hugging Face config.json)"};
  // A multimodal model's language model is its text_config.
  const bool nested = config.contains("text_config") && config["text_config"].is_object() &&
                      !config.contains("hidden_size") && !config.contains("num_hidden_layers");
  const json& c = nested ? config["text_config"] : config;
  const std::string prefix = nested ? "text_config." : "";
  const std::string family =
      c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "";
  if (auto refused = refusal(c, family)) return Error{prefix + refused->first + ": " + refused->second};
  auto shape = read_shape(c, family);
  if (!shape) return Error{prefix + shape.error().message};
  const Shape& s = *shape;
  auto context = context_tokens(c);
  if (!context) return Error{prefix + context.error().message};
  const std::string dtype = c.contains("torch_dtype") && c["torch_dtype"].is_string() ? c["torch_dtype"].get<std::string>()
                            : c.contains("dtype") && c["dtype"].is_string()       ? c["dtype"].get<std::string>()
                                                                                  : "bfloat16";
  if (dtype != "bfloat16" && dtype != "float16" && dtype != "float32") {
    return Error{prefix + (c.contains("torch_dtype") ? "torch_dtype" : "dtype") +
                 ": expected bfloat16, float16 or float32, got '" + dtype + "'"};
  }
  auto weights = weight_precision(c);
  if (!weights) return Error{prefix + weights.error().message};

  const double h = double(s.hidden);
  const double dense_mlp = (s.gated ? 3.0 : 2.0) * h * double(s.intermediate);
  const double expert = 3.0 * h * double(s.expert_width);
  const double norms = 2.0 * h;
  const bool tied = c.value("tie_word_embeddings", json(false)) == true;
  const double embeddings = double(s.vocab) * h * (tied ? 1.0 : 2.0);

  cluster::ModelSpec m;
  m.name = hf_id;
  m.hf_id = hf_id;
  m.layers = static_cast<std::uint32_t>(s.layers);
  m.hidden = static_cast<std::uint32_t>(s.hidden);
  m.heads = static_cast<std::uint32_t>(s.heads);
  m.kv_heads = static_cast<std::uint32_t>(s.mla ? s.heads : s.kv_heads);
  m.head_size = static_cast<std::uint32_t>(s.head_dim);
  m.latent_kv_width = static_cast<std::uint32_t>(s.mla ? s.kv_lora + s.rope_dim : 0);
  m.max_context_tokens = *context;
  m.dtype_bytes = 2;
  m.weights = *weights;
  const double dense_layers = double(s.layers - s.moe_layers);
  m.parameters = double(s.layers) * (attention_parameters(c, family, s) + norms) + dense_layers * dense_mlp + embeddings + h;
  if (s.experts > 0 && s.moe_layers > 0) {
    m.experts = static_cast<std::uint32_t>(s.experts);
    m.experts_per_token = static_cast<std::uint32_t>(s.experts_per_token);
    m.expert_parameters = double(s.moe_layers) * double(s.experts) * expert;
    const double router = h * double(s.experts);
    m.parameters += double(s.moe_layers) * (router + 3.0 * h * double(s.shared_width)) + m.expert_parameters;
  }
  return m;
}

}  // namespace meshsim::configs
