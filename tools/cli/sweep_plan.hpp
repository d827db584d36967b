#pragma once

// A sweep's runs, read from a grid file: config overrides (a grid, whose product is taken,
// and/or a list of override sets) x traces x seeds, every run's scenario loaded and
// checked before the first one starts.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// The most runs one grid may make (its plan is held in memory, every run checked first).
inline constexpr std::size_t kMaxSweepRuns = 50'000;

struct SweepRun {
  std::size_t index = 0;
  std::vector<configs::Override> overrides;  // the list entry's, then the grid's
  std::optional<std::string> trace;          // none: the config's workload
  std::uint64_t seed = 0;
  configs::ScenarioConfig config;            // loaded, overrides, trace and seed applied
};

struct SweepPlan {
  std::string config_path;                // the base scenario
  std::vector<std::string> override_keys;  // every key some run overrides, in first-seen order
  std::vector<SweepRun> runs;
  nlohmann::json document;  // what the runs are, for a resumed sweep to compare with
};

// The grid file (JSON or YAML):
//   {"config": "scenario.json",                      (default: the bundled default)
//    "grid": {"key.path": [v1, v2], ...},            (the product of all keys' values)
//    "list": [{"key.path": v, ...}, ...],            (override sets, each x the grid)
//    "traces": ["azure.csv", null, ...],             (null: the config's workload)
//    "seeds": [1, 2, 3],                             (default: the config's seed)
//    "comment": "..."}
// Paths are relative to the grid file. Runs are numbered list x grid x traces x seeds,
// seeds varying fastest; more than kMaxSweepRuns is refused before any is resolved. Errors
// name the grid file, the key and the run.
Expected<SweepPlan> read_sweep_plan(const std::string& grid_path);

}  // namespace meshsim::cli
