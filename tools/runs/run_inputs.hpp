#pragma once

// What shapes a run's results besides its config: the contents of the catalog and trace
// files it reads. A sweep and a training run record their inputs when they start; a
// --resume fed other inputs is refused, naming what changed, instead of mixing results
// of two runs in one folder.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// The trace file a config's workload reads ("" for a generator).
std::string workload_file(const configs::ScenarioConfig& config);

// {"catalogs": {"<catalog option or 'bundled'>": digest}, "traces": {"<path>": digest}}
// for every catalog and trace file `configs` read (digests of their bytes, file names
// relative to their folder, so a moved checkout still matches).
Expected<nlohmann::json> input_digests(const std::vector<const configs::ScenarioConfig*>& configs);

// Ok when `now` equals `recorded`; else an error for `folder` naming the first difference.
Status same_inputs(const nlohmann::json& recorded, const nlohmann::json& now, const std::string& folder);

}  // namespace meshsim::cli
