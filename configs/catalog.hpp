#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/cluster/hardware.hpp"
#include "sim/cluster/perf_model.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// Roofline factors fitted for one deployment (model, SKU, tensor-parallel degree).
struct PerfFit {
  std::string model;
  std::string sku;
  std::uint32_t tensor_parallel = 0;
  cluster::RooflineFactors factors;
};

// What the simulated world is built from: SKUs (hardware.json), models (models.json) and
// fitted performance factors (perf_fits.json), by name.
struct Catalog {
  std::map<std::string, cluster::SkuSpec> skus;
  std::map<std::string, cluster::ModelSpec> models;
  std::vector<PerfFit> fits;
  std::map<std::string, cluster::RooflineFactors> sku_defaults;  // for deployments not fitted

  // The fitted factors of a deployment; else the SKU's default; else the built-in ones.
  cluster::RooflineFactors factors_for(const std::string& model, const std::string& sku,
                                       std::uint32_t tensor_parallel) const;
};

// Reads hardware.json, models.json and perf_fits.json from `folder`.
Expected<Catalog> load_catalog(const std::string& folder);
// The project's own configs/ folder.
std::string default_catalog_folder();

// perf_fits.json for a set of fits; each SKU's default is the median of its fits.
nlohmann::json perf_fits_to_json(const std::vector<PerfFit>& fits, const std::string& comment);

}  // namespace meshsim::configs
