#pragma once

// A sweep's runs, read from a grid file: config overrides (a grid, whose product is taken,
// and/or a list of override sets) x traces x seeds. The plan holds the grid, not its runs:
// run i is built from its index when it starts, so a plan's memory does not grow with the
// number of runs. Every run's config is still resolved and checked once before the first
// starts.

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::cli {

// The most runs one grid may make (every run is checked first, about 0.15 ms each, and
// each keeps a row of the CSV in memory until the end).
inline constexpr std::size_t kMaxSweepRuns = 50'000;

// A check of one run's resolved config beyond the scenario's own (its error is the run's).
using RunCheck = std::function<Status(const configs::ScenarioConfig&)>;

struct SweepRun {
  std::size_t index = 0;
  std::vector<configs::Override> overrides;    // the list entry's, then the grid's
  std::optional<traces::TraceFileSpec> trace;  // none: the config's workload
  std::optional<std::uint64_t> seed;           // none: the config's seed
};

class SweepPlan {
 public:
  std::size_t size() const { return count_; }
  const std::string& grid_path() const { return grid_path_; }
  // Run `index` (< size()), numbered list x grid x traces x seeds, seeds varying fastest.
  SweepRun run(std::size_t index) const;
  // Its scenario: the base file's tree with the run's overrides, trace and seed applied
  // (and --catalog's folder where the command was given one). Errors name the grid file,
  // the run and the key.
  Expected<configs::ScenarioConfig> config_of(const SweepRun& run) const;

  std::string config_path;                  // the base scenario
  std::vector<std::string> override_keys;   // every key some run overrides, in first-seen order
  nlohmann::json document;                  // what the runs are, for a resumed sweep to compare with
  // One resolved config per distinct catalog folder and trace file the runs read: what
  // the command digests as the sweep's inputs.
  std::vector<configs::ScenarioConfig> distinct_inputs;

 private:
  friend Expected<SweepPlan> read_sweep_plan(const std::string&, const std::optional<std::string>&,
                                             const std::vector<std::string>&, const RunCheck&);
  std::string grid_path_;
  nlohmann::json base_;                                              // the scenario file's tree, --set applied
  std::vector<std::vector<configs::Override>> sets_;                 // the list's entries
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> axes_;  // the grid's keys
  std::vector<std::optional<traces::TraceFileSpec>> traces_;         // none: the config's workload
  std::vector<std::optional<std::uint64_t>> seeds_;                  // none: the config's seed
  std::optional<std::string> catalog_;                               // --catalog
  std::size_t count_ = 0;
};

// The grid file (JSON or YAML):
//   {"config": "scenario.json",                      (default: the bundled default)
//    "grid": {"key.path": [v1, v2], ...},            (the product of all keys' values)
//    "list": [{"key.path": v, ...}, ...],            (override sets, each x the grid)
//    "traces": ["azure.csv", null, ...],             (null: the config's workload)
//    "seeds": [1, 2, 3],                             (default: the config's seed)
//    "comment": "..."}
// Paths are relative to the grid file. `sets` (--set key.path=value) change the base
// scenario before any run's overrides. More than kMaxSweepRuns runs is refused before any
// is resolved; then every run is resolved and checked (with `catalog`, --catalog's folder,
// in place of the configs', and `check`, when given, on each run's config in the same pass:
// the command checks the deployment against its catalog). Errors name the grid file, the
// key and the run.
Expected<SweepPlan> read_sweep_plan(const std::string& grid_path, const std::optional<std::string>& catalog,
                                    const std::vector<std::string>& sets = {}, const RunCheck& check = {});

}  // namespace meshsim::cli
