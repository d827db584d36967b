#include "configs/hf_model.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "configs/config_file.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

// The families whose config.json keys and layer shapes model_from_hf_config knows.
const std::set<std::string> kFamilies = {"llama", "mistral", "mixtral", "qwen2"};

// vLLM's default max_model_len for a config: max_position_embeddings, stretched by a
// rope_scaling factor unless the scaling kind already counts it (llama3, longrope, su;
// yarn stretches original_max_position_embeddings). 0 when the config names no length.
// An error names the key that is not as expected.
Expected<std::uint32_t> context_tokens(const json& c) {
  const auto positive = [&](const json& v) { return v.is_number_unsigned() && v.get<std::uint64_t>() > 0; };
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
    if (kind != "llama3" && kind != "longrope" && kind != "su") {
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

}  // namespace

Expected<cluster::ModelSpec> model_from_hf_config(const std::string& path, const std::string& hf_id) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  const json& c = *tree;
  const auto fail = [&](const std::string& key, const std::string& what) {
    return Error{path + ": " + key + ": " + what};
  };
  if (!c.is_object()) return Error{path + ": expected a JSON object (a Hugging Face config.json)"};
  // The optional text and flag fields, typed: a mistyped one is named, never cast.
  for (const char* key : {"model_type", "torch_dtype"}) {
    if (c.contains(key) && !c[key].is_string()) return fail(key, "expected a string, got " + c[key].dump());
  }
  if (c.contains("tie_word_embeddings") && !c["tie_word_embeddings"].is_boolean()) {
    return fail("tie_word_embeddings", "expected true or false, got " + c["tie_word_embeddings"].dump());
  }
  const std::string family = c.value("model_type", "");
  if (!kFamilies.count(family)) {
    return fail("model_type", "expected one of llama, mistral, mixtral, qwen2, got '" + family + "'");
  }
  // A required positive integer.
  std::string bad;
  const auto count = [&](const char* key, std::optional<std::uint64_t> fallback = std::nullopt) -> std::uint64_t {
    const auto it = c.find(key);
    if (it == c.end() || it->is_null()) {
      if (!fallback && bad.empty()) bad = key;
      return fallback.value_or(0);
    }
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0 || it->get<std::uint64_t>() > (1ull << 32)) {
      if (bad.empty()) bad = key;
      return 0;
    }
    return it->get<std::uint64_t>();
  };
  const std::uint64_t hidden = count("hidden_size");
  const std::uint64_t layers = count("num_hidden_layers");
  const std::uint64_t heads = count("num_attention_heads");
  const std::uint64_t kv_heads = count("num_key_value_heads", heads);
  const std::uint64_t intermediate = count("intermediate_size");
  const std::uint64_t vocab = count("vocab_size");
  const std::uint64_t experts = c.contains("num_local_experts") ? count("num_local_experts") : 0;
  const std::uint64_t experts_per_token = experts ? count("num_experts_per_tok") : 0;
  if (!bad.empty()) return fail(bad, "expected a positive integer");
  if (hidden % heads != 0 || kv_heads > heads || heads % kv_heads != 0) {
    return fail("num_attention_heads", "expected heads to divide hidden_size and kv heads to divide heads");
  }
  const std::uint64_t head_dim = hidden / heads;
  if (c.contains("head_dim") && !c["head_dim"].is_null() && c["head_dim"] != head_dim) {
    return fail("head_dim", "expected hidden_size / num_attention_heads (" + std::to_string(head_dim) + ")");
  }
  if (experts_per_token > experts) return fail("num_experts_per_tok", "expected at most num_local_experts");
  auto context = context_tokens(c);
  if (!context) return Error{path + ": " + context.error().message};
  const std::string dtype = c.value("torch_dtype", "bfloat16");
  std::uint32_t dtype_bytes = 0;
  if (dtype == "bfloat16" || dtype == "float16") dtype_bytes = 2;
  if (dtype == "float32") dtype_bytes = 4;
  if (dtype_bytes == 0) return fail("torch_dtype", "expected bfloat16, float16 or float32, got '" + dtype + "'");
  const bool tied = c.value("tie_word_embeddings", false);

  const double h = double(hidden), kv = double(kv_heads * head_dim), q = double(heads * head_dim);
  double attention = h * q + 2.0 * h * kv + q * h;
  if (family == "qwen2") attention += q + 2.0 * kv;  // Qwen2's q, k, v biases
  const double mlp_one = 3.0 * h * double(intermediate);  // gate, up and down projections
  const double norms = 2.0 * h;
  const double embeddings = double(vocab) * h * (tied ? 1.0 : 2.0);
  cluster::ModelSpec m;
  m.name = hf_id;
  m.hf_id = hf_id;
  m.layers = static_cast<std::uint32_t>(layers);
  m.hidden = static_cast<std::uint32_t>(hidden);
  m.heads = static_cast<std::uint32_t>(heads);
  m.kv_heads = static_cast<std::uint32_t>(kv_heads);
  m.max_context_tokens = *context;
  m.dtype_bytes = dtype_bytes;
  if (experts > 0) {
    m.experts = static_cast<std::uint32_t>(experts);
    m.experts_per_token = static_cast<std::uint32_t>(experts_per_token);
    m.expert_parameters = double(layers) * double(experts) * mlp_one;
    const double router = h * double(experts);
    m.parameters = double(layers) * (attention + router + norms) + m.expert_parameters + embeddings + h;
  } else {
    m.parameters = double(layers) * (attention + mlp_one + norms) + embeddings + h;
  }
  return m;
}

Expected<std::vector<std::filesystem::path>> hf_config_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<fs::path> configs;
  const fs::path root = fs::path(folder) / "hf";
  std::string reason;
  switch (path_kind(root, &reason)) {
    case PathKind::kMissing:
      return configs;
    case PathKind::kFolder:
      break;
    default:
      return Error{root.string() + ": expected a folder of <org>/<name>/config.json" +
                   (reason.empty() ? "" : " (" + reason + ")")};
  }
  auto orgs = folder_entries(root);
  if (!orgs) return orgs.error();
  // A file beside the folders (a note) is not a model; a folder that cannot be reached
  // (a link loop) is refused, and whatever sits at <org>/<name>/config.json is the model's
  // config: one that is not a readable file (a folder, a pipe) is refused when read.
  const auto unreachable = [](const fs::path& path) -> std::optional<Error> {
    std::string why;
    if (path_kind(path, &why) != PathKind::kUnreachable) return std::nullopt;
    return Error{path.string() + ": cannot open it (" + why + ")"};
  };
  for (const fs::path& org : *orgs) {
    if (auto refused = unreachable(org)) return *refused;
    if (path_kind(org) != PathKind::kFolder) continue;
    auto names = folder_entries(org);
    if (!names) return names.error();
    for (const fs::path& name : *names) {
      if (auto refused = unreachable(name)) return *refused;
      if (path_kind(name) == PathKind::kFolder && path_kind(name / "config.json") != PathKind::kMissing) {
        configs.push_back(name / "config.json");
      }
    }
  }
  return configs;
}

Expected<std::vector<cluster::ModelSpec>> read_hf_models(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<cluster::ModelSpec> models;
  const auto configs = hf_config_files(folder);
  if (!configs) return configs.error();
  for (const auto& config : *configs) {
    const fs::path dir = config.parent_path();
    const std::string hf_id = dir.parent_path().filename().string() + "/" + dir.filename().string();
    auto model = model_from_hf_config(config.string(), hf_id);
    if (!model) return model.error();
    models.push_back(std::move(*model));
  }
  return models;
}

}  // namespace meshsim::configs
