#pragma once

// The file `meshsim capacity-model` writes and capacity-units target tracking reads: one
// home for its format (sim/autoscale/capacity_model.hpp has the model).

#include <nlohmann/json.hpp>
#include <string>

#include "sim/autoscale/autoscaler_options.hpp"  // and the capacity model it holds
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// Where the model came from and how it did, written beside it.
struct CapacityModelProvenance {
  std::string recipe;
  double slo_target = 0;
  double validation_error = 0;  // mean absolute percentage error on the validation days
};

nlohmann::json capacity_model_json(const autoscale::CapacityModel& model, const CapacityModelProvenance& provenance);

// Reads a model file; errors name the file and the key (format 1; `features` one of the
// ladder's names; `sizes` ascending instance counts, each with one finite weight per
// feature).
Expected<autoscale::CapacityModel> read_capacity_model(const std::string& path);

}  // namespace meshsim::configs
