#include "configs/hf_model.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "configs/config_file.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

// The families whose config.json keys and layer shapes model_from_hf_config knows.
const std::set<std::string> kFamilies = {"llama", "mistral", "mixtral", "qwen2"};

}  // namespace

Expected<cluster::ModelSpec> model_from_hf_config(const std::string& path, const std::string& hf_id) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  const json& c = *tree;
  const auto fail = [&](const std::string& key, const std::string& what) {
    return Error{path + ": " + key + ": " + what};
  };
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

std::vector<std::filesystem::path> hf_config_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<fs::path> configs;
  const fs::path root = fs::path(folder) / "hf";
  if (!fs::is_directory(root)) return configs;
  for (const auto& org : fs::directory_iterator(root)) {
    if (!org.is_directory()) continue;
    for (const auto& name : fs::directory_iterator(org.path())) {
      if (fs::is_regular_file(name.path() / "config.json")) configs.push_back(name.path() / "config.json");
    }
  }
  std::sort(configs.begin(), configs.end());
  return configs;
}

Expected<std::vector<cluster::ModelSpec>> read_hf_models(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<cluster::ModelSpec> models;
  const std::vector<fs::path> configs = hf_config_files(folder);
  for (const auto& config : configs) {
    const fs::path dir = config.parent_path();
    const std::string hf_id = dir.parent_path().filename().string() + "/" + dir.filename().string();
    auto model = model_from_hf_config(config.string(), hf_id);
    if (!model) return model.error();
    models.push_back(std::move(*model));
  }
  return models;
}

}  // namespace meshsim::configs
