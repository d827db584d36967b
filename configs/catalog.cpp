#include "configs/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "configs/config_file.hpp"
#include "configs/hf_model.hpp"
#include "configs/object_reader.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;


// Calls `each` with a reader for every element of the array at `key`.
template <typename Each>
void read_array(ObjectReader& reader, std::string_view key, Each each) {
  const json* array = reader.raw(key);
  if (array == nullptr || !array->is_array()) {
    reader.fail(key, "expected a list");
    return;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    ObjectReader item(&(*array)[i], reader.path_of(key) + "[" + std::to_string(i) + "]", reader.errors());
    each(item);
  }
}

void read_factors(ObjectReader& r, cluster::RooflineFactors& f) {
  r.read("prefill_overhead_ms", f.prefill_overhead_ms, "a positive number", kPositive);
  r.read("prefill_efficiency", f.prefill_efficiency, "a positive number", kPositive);
  r.read("prefill_knee_tokens", f.prefill_knee_tokens, "a positive number", kPositive);
  r.read("decode_overhead_ms", f.decode_overhead_ms, "a positive number", kPositive);
  r.read("decode_memory_efficiency", f.decode_memory_efficiency, "a positive number", kPositive);
  r.read("decode_compute_efficiency", f.decode_compute_efficiency, "a positive number", kPositive);
}

json factors_to_json(const cluster::RooflineFactors& f) {
  return json{{"prefill_overhead_ms", f.prefill_overhead_ms},
              {"prefill_efficiency", f.prefill_efficiency},
              {"prefill_knee_tokens", f.prefill_knee_tokens},
              {"decode_overhead_ms", f.decode_overhead_ms},
              {"decode_memory_efficiency", f.decode_memory_efficiency},
              {"decode_compute_efficiency", f.decode_compute_efficiency}};
}

// The upper bound of a step coefficient: a roofline term at 1000x its ideal time, an
// overhead of a second.
constexpr double kMaxStepCoefficient = 1e6;

void read_step_coefficients(ObjectReader& r, cluster::StepCoefficients& c) {
  const auto in_range = [](double v) { return v >= 0 && v <= kMaxStepCoefficient; };
  for (std::size_t i = 0; i < cluster::kStepTermCount; ++i) {
    r.read(cluster::kStepTermNames[i], c.step[i], "a number in [0, 1e6]", in_range);
  }
  r.read("pre_queue_ms", c.request.pre_queue_ms, "a number in [0, 1e6]", in_range);
  r.read("pre_queue_us_per_prompt_token", c.request.pre_queue_us_per_prompt_token, "a number in [0, 1e6]", in_range);
}

json step_coefficients_to_json(const cluster::StepCoefficients& c) {
  json out = json::object();
  for (std::size_t i = 0; i < cluster::kStepTermCount; ++i) out[std::string(cluster::kStepTermNames[i])] = c.step[i];
  out["pre_queue_ms"] = c.request.pre_queue_ms;
  out["pre_queue_us_per_prompt_token"] = c.request.pre_queue_us_per_prompt_token;
  return out;
}

template <typename Read>
Status read_file(const std::string& path, Read read) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  ConfigErrors errors(path);
  {
    ObjectReader reader(&*tree, "", errors);
    read(reader);
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return Ok{};
}

}  // namespace

FactorsLookup Catalog::lookup_factors(const std::string& model, const std::string& sku,
                                     std::uint32_t tensor_parallel) const {
  for (const auto& fit : fits) {
    if (fit.model == model && fit.sku == sku && fit.tensor_parallel == tensor_parallel) {
      return {fit.factors, FactorsSource::kFitted};
    }
  }
  const auto it = sku_defaults.find(sku);
  if (it != sku_defaults.end()) return {it->second, FactorsSource::kSkuMedian};
  return {cluster::RooflineFactors{}, FactorsSource::kBuiltIn};
}

const cluster::ModelSpec* Catalog::find_model(const std::string& name) const {
  if (const auto it = models.find(name); it != models.end()) return &it->second;
  for (const auto& [key, model] : models) {
    if (!model.hf_id.empty() && model.hf_id == name) return &model;
  }
  return nullptr;
}

const cluster::SkuSpec* Catalog::find_sku(const std::string& name) const {
  if (const auto it = skus.find(name); it != skus.end()) return &it->second;
  for (const auto& [key, sku] : skus) {
    if (std::find(sku.aliases.begin(), sku.aliases.end(), name) != sku.aliases.end()) return &sku;
  }
  return nullptr;
}

const cluster::StepCoefficients* Catalog::step_fit(const std::string& sku) const {
  const auto it = step_fits.find(sku);
  return it == step_fits.end() ? nullptr : &it->second;
}

namespace {

// A name a config can pick an entry by: not empty, no spaces at either end (" h100" would
// be a second, invisible spelling), no control characters.
bool plain_name(const std::string& name) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  return !name.empty() && !space(name.front()) && !space(name.back()) &&
         std::none_of(name.begin(), name.end(), [](unsigned char c) { return std::iscntrl(c) != 0; });
}

// Fails each of `keys` that `r`'s entry lacks: `what` (a SKU, a model) has no default for it.
void require(ObjectReader& r, std::initializer_list<const char*> keys, const std::string& what) {
  for (const char* key : keys) {
    if (!r.has(key)) r.fail(key, "missing: " + what + " needs its own");
  }
}

// hardware.json's SKUs into `catalog`.
Status read_hardware_file(const std::string& file, Catalog& catalog) {
  return read_file(file, [&](ObjectReader& top) {
    std::set<std::string> named;  // in this file: a second entry of one name is a mistake, not a replacement
    read_array(top, "skus", [&](ObjectReader& r) {
      // Every figure is the SKU's own: a default would be another GPU's (H100's).
      require(r, {"gpus_per_node", "hbm_gib_per_gpu", "peak_tflops", "hbm_tb_per_s", "nvlink_gb_per_s",
                  "network_gb_per_s", "power_kw", "cost_per_hour"},
              "a SKU");
      cluster::SkuSpec s;
      r.read("name", s.name);
      r.read("gpus_per_node", s.gpus_per_node, "a positive integer", kAtLeastOne);
      r.read("hbm_gib_per_gpu", s.hbm_gib_per_gpu, "a positive number", kPositive);
      r.read("peak_tflops", s.peak_tflops, "a positive number", kPositive);
      r.read("peak_tflops_fp8", s.peak_tflops_fp8, "a non-negative number (0: no FP8 tensor cores)", kNonNegative);
      r.read("hbm_tb_per_s", s.hbm_tb_per_s, "a positive number", kPositive);
      r.read("nvlink_gb_per_s", s.nvlink_gb_per_s, "a positive number", kPositive);
      r.read("network_gb_per_s", s.network_gb_per_s, "a positive number", kPositive);
      r.read("power_kw", s.power_kw, "a positive number", kPositive);
      r.read("cost_per_hour", s.cost_per_hour, "a non-negative price", [](double v) { return v >= 0; });
      if (const json* aliases = r.raw("aliases")) {
        if (!aliases->is_array() ||
            !std::all_of(aliases->begin(), aliases->end(), [](const json& a) { return a.is_string(); })) {
          r.fail("aliases", "expected a list of names");
        } else {
          s.aliases = aliases->get<std::vector<std::string>>();
          for (const std::string& alias : s.aliases) {
            if (!plain_name(alias)) r.fail("aliases", "'" + alias + "' is not a name (empty, or spaces at an end)");
          }
        }
      }
      if (!plain_name(s.name)) r.fail("name", "expected a SKU name (not empty, no spaces at either end)");
      if (!named.insert(s.name).second) r.fail("name", "'" + s.name + "' names an earlier SKU of this file too");
      catalog.skus[s.name] = s;
    });
  });
}

// models.json's models into `catalog`.
Status read_models_file(const std::string& file, Catalog& catalog) {
  return read_file(file, [&](ObjectReader& top) {
    std::set<std::string> named;
    read_array(top, "models", [&](ObjectReader& r) {
      require(r, {"parameters", "layers", "hidden", "heads", "kv_heads"}, "a model");
      cluster::ModelSpec m;
      r.read("name", m.name);
      r.read("parameters", m.parameters, "a positive number", kPositive);
      r.read("layers", m.layers, "a positive integer", kAtLeastOne);
      r.read("hidden", m.hidden, "a positive integer", kAtLeastOne);
      r.read("heads", m.heads, "a positive integer", kAtLeastOne);
      r.read("kv_heads", m.kv_heads, "a positive integer", kAtLeastOne);
      r.read("dtype_bytes", m.dtype_bytes, "a positive integer", kAtLeastOne);
      r.read("head_dim", m.head_size, "a positive integer (per attention head)", kAtLeastOne);
      r.read_choice("weights", m.weights, cluster::kPrecisionNames);
      r.read_choice("kv_cache", m.kv_cache, cluster::kPrecisionNames);
      r.read("hf_id", m.hf_id);
      r.read("experts", m.experts);
      r.read("experts_per_token", m.experts_per_token);
      r.read("expert_parameters", m.expert_parameters, "a non-negative number", kNonNegative);
      r.read("max_position_embeddings", m.max_context_tokens, "a positive integer (the context, in tokens)",
             kAtLeastOne);
      if (m.experts > 0 && (m.experts_per_token == 0 || m.experts_per_token > m.experts)) {
        r.fail("experts_per_token", "expected 1 to experts (" + std::to_string(m.experts) + ")");
      }
      if ((m.experts > 0) != (m.expert_parameters > 0) || m.expert_parameters >= m.parameters) {
        r.fail("expert_parameters", "expected experts' weights (> 0, < parameters) exactly when experts > 0");
      }
      if (!plain_name(m.name)) r.fail("name", "expected a model name (not empty, no spaces at either end)");
      if (!m.hf_id.empty() && !plain_name(m.hf_id)) r.fail("hf_id", "expected a Hugging Face id (no spaces at either end)");
      if (!named.insert(m.name).second) r.fail("name", "'" + m.name + "' names an earlier model of this file too");
      if (m.heads && ((m.head_size == 0 && m.hidden % m.heads != 0) || m.kv_heads > m.heads)) {
        r.fail("heads", "expected heads to divide hidden (unless head_dim is given) and kv_heads <= heads");
      }
      catalog.models[m.name] = m;
    });
  });
}

// perf_fits.json's fits into `catalog`, a fit replacing one of the same model, SKU and TP degree.
Status read_perf_fits_file(const std::string& file, Catalog& catalog, bool all_required) {
  return read_file(file, [&](ObjectReader& top) {
    read_array(top, "fits", [&](ObjectReader& r) {
      PerfFit fit;
      r.read("model", fit.model);
      r.read("sku", fit.sku);
      r.read("tensor_parallel", fit.tensor_parallel, "a positive integer", kAtLeastOne);
      read_factors(r, fit.factors);
      const auto same = std::find_if(catalog.fits.begin(), catalog.fits.end(), [&](const PerfFit& f) {
        return f.model == fit.model && f.sku == fit.sku && f.tensor_parallel == fit.tensor_parallel;
      });
      if (same != catalog.fits.end()) {
        *same = fit;
      } else {
        catalog.fits.push_back(fit);
      }
    });
    // `meshsim calibrate` writes sku_defaults; a hand-written file may leave them out.
    if (all_required || top.has("sku_defaults")) {
      read_array(top, "sku_defaults", [&](ObjectReader& r) {
        std::string sku;
        r.read("sku", sku);
        read_factors(r, catalog.sku_defaults[sku]);
      });
    }
  });
}

// step_model.json's per-SKU step-time factors into `catalog`.
Status read_step_model_file(const std::string& file, Catalog& catalog) {
  return read_file(file, [&](ObjectReader& top) {
    read_array(top, "fits", [&](ObjectReader& r) {
      std::string sku;
      r.read("sku", sku);
      if (sku.empty()) r.fail("sku", "expected a SKU name");
      cluster::StepCoefficients c;
      read_step_coefficients(r, c);
      catalog.step_fits[sku] = c;
      std::string source;
      r.read("source", source);
      catalog.step_fit_sources[sku] = source;
    });
  });
}

// Reads `folder`'s catalog files into `catalog`, an entry replacing one of the same name
// (a fit: of the same model, SKU and TP degree). A missing file is skipped unless
// `all_required`; perf_fits.json and step_model.json are skipped unless `with_fits`.
Status read_catalog_files(const std::string& folder, Catalog& catalog, bool all_required, bool with_fits = true) {
  const auto present = [&](const char* file) {
    return all_required || path_kind(std::filesystem::path(folder) / file) != PathKind::kMissing;
  };
  if (present("hardware.json")) {
    if (auto read = read_hardware_file(folder + "/hardware.json", catalog); !read) return read;
  }
  if (present("models.json")) {
    if (auto read = read_models_file(folder + "/models.json", catalog); !read) return read;
  }
  if (with_fits && present("perf_fits.json")) {
    if (auto read = read_perf_fits_file(folder + "/perf_fits.json", catalog, all_required); !read) return read;
  }
  if (with_fits && present("step_model.json")) {
    if (auto read = read_step_model_file(folder + "/step_model.json", catalog); !read) return read;
  }
  auto hf = read_hf_models(folder);
  if (!hf) return hf.error();
  for (auto& model : *hf) catalog.models[model.name] = std::move(model);
  return Ok{};
}

// Every name a config may use picks one entry: a SKU's name or alias names no other SKU,
// a model's name or Hugging Face id no other model (find_sku and find_model would
// otherwise take whichever comes first, and a user's entry could shadow a bundled one, or
// be shadowed, without a word).
Status check_names_unambiguous(const Catalog& catalog) {
  std::map<std::string, std::string> sku_of;  // every SKU name and alias -> its SKU
  const auto claim = [](std::map<std::string, std::string>& owner, const std::string& name, const std::string& entry,
                        const char* what, const char* kind) -> Status {
    const auto [it, fresh] = owner.emplace(name, entry);
    if (fresh || it->second == entry) return Ok{};
    return Error{std::string(what) + " '" + entry + "': " + kind + " '" + name + "' also names " + what + " '" +
                 it->second + "': give each name to one " + what};
  };
  for (const auto& [name, sku] : catalog.skus) {
    if (auto status = claim(sku_of, name, name, "SKU", "its name"); !status) return status;
  }
  for (const auto& [name, sku] : catalog.skus) {
    for (const std::string& alias : sku.aliases) {
      if (auto status = claim(sku_of, alias, name, "SKU", "alias"); !status) return status;
    }
  }
  std::map<std::string, std::string> model_of;
  for (const auto& [name, model] : catalog.models) {
    if (auto status = claim(model_of, name, name, "model", "its name"); !status) return status;
  }
  for (const auto& [name, model] : catalog.models) {
    if (model.hf_id.empty()) continue;
    if (auto status = claim(model_of, model.hf_id, name, "model", "hf_id"); !status) return status;
  }
  return Ok{};
}

}  // namespace

Expected<Catalog> load_catalog(const std::string& folder) {
  Catalog catalog;
  if (auto read = read_catalog_files(folder, catalog, true); !read) return read.error();
  if (auto names = check_names_unambiguous(catalog); !names) return Error{"catalog " + folder + ": " + names.error().message};
  return catalog;
}

Expected<Catalog> load_catalog(const std::string& folder, const std::string& user_folder, bool user_fits) {
  auto catalog = load_catalog(folder);
  if (!catalog || user_folder.empty()) return catalog;
  namespace fs = std::filesystem;
  std::string reason;
  if (path_kind(user_folder, &reason) != PathKind::kFolder) {
    return Error{"catalog " + user_folder + ": not a folder" + (reason.empty() ? "" : " (" + reason + ")")};
  }
  const auto holds = [&](const char* entry) { return path_kind(fs::path(user_folder) / entry) != PathKind::kMissing; };
  if (!holds("hardware.json") && !holds("models.json") && !holds("perf_fits.json") && !holds("step_model.json") &&
      !holds("hf")) {
    return Error{"catalog " + user_folder +
                 ": holds none of hardware.json, models.json, perf_fits.json, step_model.json, hf/"};
  }
  if (auto read = read_catalog_files(user_folder, *catalog, false, user_fits); !read) return read.error();
  if (auto names = check_names_unambiguous(*catalog); !names) {
    return Error{"catalog " + user_folder + " over the bundled one: " + names.error().message};
  }
  return catalog;
}

Expected<std::vector<std::string>> catalog_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* name : {"hardware.json", "models.json", "perf_fits.json", "step_model.json"}) {
    if (path_kind(fs::path(folder) / name) != PathKind::kMissing) files.push_back((fs::path(folder) / name).string());
  }
  const auto hf = hf_config_files(folder);
  if (!hf) return hf.error();
  for (const fs::path& config : *hf) files.push_back(config.string());
  return files;
}

namespace {
std::string& config_folder() {
  static std::string folder = MESHSIM_CONFIG_DIR;
  return folder;
}
}  // namespace

std::string default_catalog_folder() { return config_folder(); }
void set_config_folder(std::string folder) { config_folder() = std::move(folder); }

json step_fits_to_json(const std::map<std::string, cluster::StepCoefficients>& fits, const std::string& comment,
                       const std::string& source) {
  json out = {{"comment", comment}, {"fits", json::array()}};
  for (const auto& [sku, c] : fits) {
    json entry = {{"sku", sku}};
    if (!source.empty()) entry["source"] = source;
    entry.update(step_coefficients_to_json(c));
    out["fits"].push_back(entry);
  }
  return out;
}

json perf_fits_to_json(const std::vector<PerfFit>& fits, const std::string& comment) {
  json out = {{"comment", comment}, {"fits", json::array()}, {"sku_defaults", json::array()}};
  std::map<std::string, std::vector<cluster::RooflineFactors>> by_sku;
  for (const auto& fit : fits) {
    json entry = {{"model", fit.model}, {"sku", fit.sku}, {"tensor_parallel", fit.tensor_parallel}};
    entry.update(factors_to_json(fit.factors));
    out["fits"].push_back(entry);
    by_sku[fit.sku].push_back(fit.factors);
  }
  for (auto& sku_fits : by_sku) {
    const std::string& sku = sku_fits.first;
    const auto& list = sku_fits.second;  // named, not a structured binding: the lambda captures it
    // Median of each factor over the SKU's fits: robust to one odd deployment.
    auto median_of = [&list](double cluster::RooflineFactors::*field) {
      std::vector<double> values;
      for (const auto& f : list) values.push_back(f.*field);
      std::sort(values.begin(), values.end());
      const std::size_t n = values.size();
      return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
    };
    cluster::RooflineFactors d;
    d.prefill_overhead_ms = median_of(&cluster::RooflineFactors::prefill_overhead_ms);
    d.prefill_efficiency = median_of(&cluster::RooflineFactors::prefill_efficiency);
    d.prefill_knee_tokens = median_of(&cluster::RooflineFactors::prefill_knee_tokens);
    d.decode_overhead_ms = median_of(&cluster::RooflineFactors::decode_overhead_ms);
    d.decode_memory_efficiency = median_of(&cluster::RooflineFactors::decode_memory_efficiency);
    d.decode_compute_efficiency = median_of(&cluster::RooflineFactors::decode_compute_efficiency);
    json entry = {{"sku", sku}};
    entry.update(factors_to_json(d));
    out["sku_defaults"].push_back(entry);
  }
  return out;
}

}  // namespace meshsim::configs
