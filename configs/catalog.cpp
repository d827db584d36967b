#include "configs/catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "configs/config_file.hpp"
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

namespace {

// Reads `folder`'s catalog files into `catalog`, an entry replacing one of the same name
// (a fit: of the same model, SKU and TP degree). A missing file is skipped unless
// `all_required`; perf_fits.json is skipped unless `with_fits`.
Status read_catalog_files(const std::string& folder, Catalog& catalog, bool all_required, bool with_fits = true) {
  const auto present = [&](const char* file) {
    return all_required || std::filesystem::exists(std::filesystem::path(folder) / file);
  };
  if (present("hardware.json")) {
    auto hardware = read_file(folder + "/hardware.json", [&](ObjectReader& top) {
      read_array(top, "skus", [&](ObjectReader& r) {
        cluster::SkuSpec s;
        r.read("name", s.name);
        r.read("gpus_per_node", s.gpus_per_node, "a positive integer", kAtLeastOne);
        r.read("hbm_gib_per_gpu", s.hbm_gib_per_gpu, "a positive number", kPositive);
        r.read("peak_tflops", s.peak_tflops, "a positive number", kPositive);
        r.read("hbm_tb_per_s", s.hbm_tb_per_s, "a positive number", kPositive);
        r.read("nvlink_gb_per_s", s.nvlink_gb_per_s, "a positive number", kPositive);
        r.read("network_gb_per_s", s.network_gb_per_s, "a positive number", kPositive);
        r.read("power_kw", s.power_kw, "a positive number", kPositive);
        r.read("cost_per_hour", s.cost_per_hour, "a non-negative price", [](double v) { return v >= 0; });
        if (s.name.empty()) r.fail("name", "expected a SKU name");
        catalog.skus[s.name] = s;
      });
    });
    if (!hardware) return hardware.error();
  }
  if (present("models.json")) {
    auto models = read_file(folder + "/models.json", [&](ObjectReader& top) {
      read_array(top, "models", [&](ObjectReader& r) {
        cluster::ModelSpec m;
        r.read("name", m.name);
        r.read("parameters", m.parameters, "a positive number", kPositive);
        r.read("layers", m.layers, "a positive integer", kAtLeastOne);
        r.read("hidden", m.hidden, "a positive integer", kAtLeastOne);
        r.read("heads", m.heads, "a positive integer", kAtLeastOne);
        r.read("kv_heads", m.kv_heads, "a positive integer", kAtLeastOne);
        r.read("dtype_bytes", m.dtype_bytes, "a positive integer", kAtLeastOne);
        if (m.name.empty()) r.fail("name", "expected a model name");
        if (m.heads && (m.hidden % m.heads != 0 || m.kv_heads > m.heads)) {
          r.fail("heads", "expected heads to divide hidden and kv_heads <= heads");
        }
        catalog.models[m.name] = m;
      });
    });
    if (!models) return models.error();
  }
  if (with_fits && present("perf_fits.json")) {
    auto fits = read_file(folder + "/perf_fits.json", [&](ObjectReader& top) {
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
    if (!fits) return fits.error();
  }
  return Ok{};
}

}  // namespace

Expected<Catalog> load_catalog(const std::string& folder) {
  Catalog catalog;
  if (auto read = read_catalog_files(folder, catalog, true); !read) return read.error();
  return catalog;
}

Expected<Catalog> load_catalog(const std::string& folder, const std::string& user_folder, bool user_fits) {
  auto catalog = load_catalog(folder);
  if (!catalog || user_folder.empty()) return catalog;
  namespace fs = std::filesystem;
  if (!fs::is_directory(user_folder)) return Error{"catalog " + user_folder + ": not a folder"};
  if (!fs::exists(fs::path(user_folder) / "hardware.json") && !fs::exists(fs::path(user_folder) / "models.json") &&
      !fs::exists(fs::path(user_folder) / "perf_fits.json")) {
    return Error{"catalog " + user_folder + ": holds none of hardware.json, models.json, perf_fits.json"};
  }
  if (auto read = read_catalog_files(user_folder, *catalog, false, user_fits); !read) return read.error();
  return catalog;
}

std::string default_catalog_folder() { return MESHSIM_CONFIG_DIR; }

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
