#include "configs/capacity_model_file.hpp"

#include <cmath>

#include "configs/config_file.hpp"

namespace meshsim::configs {

using nlohmann::json;

json capacity_model_json(const autoscale::CapacityModel& model, const CapacityModelProvenance& provenance) {
  json sizes = json::array();
  for (std::size_t i = 0; i < model.sizes.size(); ++i) {
    sizes.push_back({{"instances", model.sizes[i]}, {"seconds_per_request", model.weights[i]}});
  }
  return {{"comment", "1 / requests per second per instance = seconds_per_request . features (tokens in thousands); "
                      "written by meshsim capacity-model"},
          {"format", 1},
          {"recipe", provenance.recipe},
          {"slo_target", provenance.slo_target},
          {"features", autoscale::kCapacityFeatureNames.name(model.features)},
          {"feature_names", autoscale::capacity_feature_names(model.features)},
          {"sizes", sizes},
          {"validation_mape", provenance.validation_error}};
}

Expected<autoscale::CapacityModel> read_capacity_model(const std::string& path) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  const auto bad = [&](const std::string& key, const std::string& expected) {
    return Error{path + ": " + key + ": expected " + expected};
  };
  const json& t = *tree;
  if (!t.is_object()) return bad("the file", "a JSON object as meshsim capacity-model writes it");
  if (!t.contains("format") || t["format"] != 1) return bad("format", "1");
  autoscale::CapacityModel model;
  const auto features = t.contains("features") && t["features"].is_string()
                            ? autoscale::kCapacityFeatureNames.parse(t["features"].get<std::string>())
                            : std::nullopt;
  if (!features) return bad("features", "one of " + autoscale::kCapacityFeatureNames.accepted());
  model.features = *features;
  const std::size_t width = autoscale::capacity_feature_names(model.features).size();
  if (!t.contains("sizes") || !t["sizes"].is_array() || t["sizes"].empty()) {
    return bad("sizes", "a non-empty array of {\"instances\", \"seconds_per_request\"}");
  }
  for (std::size_t i = 0; i < t["sizes"].size(); ++i) {
    const json& size = t["sizes"][i];
    const std::string key = "sizes[" + std::to_string(i) + "]";
    if (!size.is_object() || !size.contains("instances") || !size["instances"].is_number_unsigned() ||
        size["instances"].get<std::uint64_t>() < 1 || size["instances"].get<std::uint64_t>() > 100'000) {
      return bad(key + ".instances", "an integer in [1, 100000]");
    }
    const auto n = size["instances"].get<std::uint32_t>();
    if (!model.sizes.empty() && n <= model.sizes.back()) return bad(key + ".instances", "sizes in ascending order");
    const json* weights = size.contains("seconds_per_request") ? &size["seconds_per_request"] : nullptr;
    if (weights == nullptr || !weights->is_array() || weights->size() != width) {
      return bad(key + ".seconds_per_request", std::to_string(width) + " numbers, one per feature");
    }
    std::vector<double> w;
    for (const json& value : *weights) {
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return bad(key + ".seconds_per_request", "finite numbers");
      }
      w.push_back(value.get<double>());
    }
    model.sizes.push_back(n);
    model.weights.push_back(std::move(w));
  }
  return model;
}

}  // namespace meshsim::configs
