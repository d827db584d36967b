#pragma once

// Hydra-style overrides of a scenario file's tree, "key.path=value", for the Python API
// and sweeps: one config file, many variants, without editing it.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

struct Override {
  std::string path;  // dot-separated keys; a list element by its index ("serving.start_state.0.count")
  nlohmann::json value;
  bool operator==(const Override&) const = default;
};

// "key.path=value": the value is read as JSON when it parses as JSON (numbers, true,
// false, null, lists, objects, quoted strings), else taken as a bare string (Hydra's
// habit: policy=oracle). Errors name the assignment.
Expected<Override> parse_override(std::string_view assignment);

// Sets `o.path` in `tree`, creating missing object keys; a path through a value that is
// neither an object nor a list, or an index past a list's end, is an error naming the path.
Status apply_override(nlohmann::json& tree, const Override& o);

// The scenario at `path` (empty: the bundled default scenario) with `overrides` applied to
// its tree before validation, so a bad value is reported like one in the file, with its
// key path. Paths inside it (generators, profiles) stay relative to the file's folder.
Expected<ScenarioConfig> load_scenario_with(const std::string& path, const std::vector<Override>& overrides);

}  // namespace meshsim::configs
