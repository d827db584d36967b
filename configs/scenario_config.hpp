#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "configs/cluster_config.hpp"
#include "configs/rl_config.hpp"
#include "configs/scaling_config.hpp"
#include "configs/serving_config.hpp"
#include "sim/engine/expected.hpp"
#include "sim/replay/replay_options.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::configs {

// Everything a replay needs, typed and validated. Field docs and defaults live with the
// structs they come from; the file format is in configs/README.md.
struct ScenarioConfig {
  std::string name = "scenario";
  std::uint64_t seed = 42;
  traces::WorkloadSpec workload;
  ServingSpec serving;
  ScalingSpec scaling;
  AutoscalerSpec autoscaler;
  ClusterSpec cluster;
  replay::ReplayOptions replay;
  std::optional<RlSpec> rl;  // the RL environment over this scenario (meshsim train / eval)
  // A folder of the user's own hardware.json, models.json and perf_fits.json, layered over
  // the bundled catalog (relative to the config file; `--catalog` replaces it).
  std::optional<std::string> catalog;
};

// Parses a config tree read from `file`; a workload generator given as a path is read
// relative to `file`'s folder. All problems are reported at once, each with its key path.
Expected<ScenarioConfig> parse_scenario(const nlohmann::json& tree, const std::string& file);
// Reads and parses a JSON or YAML scenario file.
Expected<ScenarioConfig> load_scenario(const std::string& path);
// Parses a generator object (as in configs/workloads/*.json).
Expected<traces::GeneratorSpec> load_generator(const std::string& path);

// The resolved config, defaults filled in, in the file format (for summary.json).
nlohmann::json to_json(const ScenarioConfig& config);
nlohmann::json to_json(const traces::GeneratorSpec& spec);

// The bundled catalog with the config's own (its `catalog` folder) layered over it.
Expected<Catalog> load_scenario_catalog(const ScenarioConfig& config);

// The path of the bundled default scenario (found beside the executable's source tree).
std::string default_scenario_path();
// The default RL training recipe (`meshsim train` without --config).
std::string default_training_path();

}  // namespace meshsim::configs
