#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/perf/hardware.hpp"
#include "sim/perf/perf_model.hpp"
#include "sim/perf/step_time_model.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// Roofline factors fitted for one deployment (model, SKU, tensor-parallel degree).
struct PerfFit {
  std::string model;
  std::string sku;
  std::uint32_t tensor_parallel = 0;
  cluster::RooflineFactors factors;
};

// Where a deployment's roofline factors come from: its own fit, or borrowed (the median
// of its SKU's fits for other models or TP degrees, or the built-in defaults).
enum class FactorsSource { kFitted, kSkuMedian, kBuiltIn };

struct FactorsLookup {
  cluster::RooflineFactors factors;
  FactorsSource source = FactorsSource::kFitted;
};

// What the simulated world is built from: SKUs (hardware.json), models (models.json and
// Hugging Face config.json files under hf/), fitted roofline factors (perf_fits.json) and
// step-time coefficients per SKU (step_model.json), by name.
struct Catalog {
  std::map<std::string, cluster::SkuSpec> skus;
  std::map<std::string, cluster::ModelSpec> models;
  std::vector<PerfFit> fits;
  std::map<std::string, cluster::RooflineFactors> sku_defaults;  // for deployments not fitted
  std::map<std::string, cluster::StepCoefficients> step_fits;    // by SKU name
  std::map<std::string, std::string> step_fit_sources;           // what each was fitted on (may be empty)

  // By name, else by Hugging Face id (models) or alias (SKUs); null when unknown.
  const cluster::ModelSpec* find_model(const std::string& name) const;
  const cluster::SkuSpec* find_sku(const std::string& name) const;
  // The SKU's fitted step-time coefficients, or null (the built-in ones then apply).
  const cluster::StepCoefficients* step_fit(const std::string& sku) const;

  // The fitted factors of a deployment; else the SKU's default; else the built-in ones.
  FactorsLookup lookup_factors(const std::string& model, const std::string& sku, std::uint32_t tensor_parallel) const;
  cluster::RooflineFactors factors_for(const std::string& model, const std::string& sku,
                                       std::uint32_t tensor_parallel) const {
    return lookup_factors(model, sku, tensor_parallel).factors;
  }
};

// Reads hardware.json, models.json and perf_fits.json from `folder`.
Expected<Catalog> load_catalog(const std::string& folder);
// `folder`'s catalog with a user's own layered over it (`meshsim --catalog`, a config's
// `catalog` key; empty: none): any of its hardware.json, models.json, hf/*/*/config.json,
// perf_fits.json and step_model.json (as `meshsim calibrate` writes them) adds entries and
// replaces those of the same name (a roofline fit: of the same model, SKU and TP degree). Errors name the file and key. `user_fits`
// false leaves the user's perf_fits.json out (`meshsim calibrate` is what writes it,
// perhaps into that folder).
Expected<Catalog> load_catalog(const std::string& folder, const std::string& user_folder, bool user_fits = true);
// The files of `folder` that load_catalog reads (those present), in a fixed order: what a
// digest of a catalog's contents covers.
Expected<std::vector<std::string>> catalog_files(const std::string& folder);
// The bundled configs/ folder (catalog, scenarios, workload fits): this source tree's,
// compiled in, unless set_config_folder moved it (an installed Python package holds its
// own copy, since the wheel may outlive the tree it was built from).
std::string default_catalog_folder();
// Called once, before anything reads the folder (the package's import does).
void set_config_folder(std::string folder);

// step_model.json for per-SKU step-time coefficients.
nlohmann::json step_fits_to_json(const std::map<std::string, cluster::StepCoefficients>& fits,
                                 const std::string& comment, const std::string& source = "");

// perf_fits.json for a set of fits; each SKU's default is the median of its fits.
nlohmann::json perf_fits_to_json(const std::vector<PerfFit>& fits, const std::string& comment);

}  // namespace meshsim::configs
