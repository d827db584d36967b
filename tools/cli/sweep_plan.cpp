#include "tools/cli/sweep_plan.hpp"

#include <algorithm>
#include <filesystem>

#include "configs/config_file.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;

// A path in the grid file, relative to its folder.
std::string beside(const std::string& grid_path, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(grid_path).parent_path() / path).lexically_normal().string();
}

// The values of an optional list key; `fallback` when absent.
Expected<json> list_of(const json& grid, const std::string& file, const char* key, json fallback) {
  if (!grid.contains(key)) return fallback;
  const json& value = grid[key];
  if (!value.is_array() || value.empty()) return Error{file + ": " + key + ": expected a non-empty list"};
  return value;
}

}  // namespace

Expected<SweepPlan> read_sweep_plan(const std::string& grid_path) {
  auto grid = configs::read_config_file(grid_path);
  if (!grid) return grid.error();
  if (!grid->is_object()) return Error{grid_path + ": expected an object with config, grid, list, traces, seeds"};
  for (const auto& [key, value] : grid->items()) {
    if (key != "config" && key != "grid" && key != "list" && key != "traces" && key != "seeds" && key != "comment") {
      return Error{grid_path + ": " + key + ": unknown key (expected config, grid, list, traces, seeds, comment)"};
    }
  }
  SweepPlan plan;
  if (grid->contains("config")) {
    if (!(*grid)["config"].is_string()) return Error{grid_path + ": config: expected the path of a scenario file"};
    plan.config_path = beside(grid_path, (*grid)["config"].get<std::string>());
  } else {
    plan.config_path = configs::default_scenario_path();
  }

  // The override sets: each list entry x the grid's product.
  auto list = list_of(*grid, grid_path, "list", json::array({json::object()}));
  if (!list) return list.error();
  std::vector<std::vector<configs::Override>> sets;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    if (!entry.is_object()) return Error{grid_path + ": list[" + std::to_string(i) + "]: expected {\"key.path\": value}"};
    std::vector<configs::Override> set;
    for (const auto& [key, value] : entry.items()) set.push_back({key, value});
    sets.push_back(std::move(set));
  }
  if (grid->contains("grid")) {
    const json& axes = (*grid)["grid"];
    if (!axes.is_object()) return Error{grid_path + ": grid: expected {\"key.path\": [values...]}"};
    for (const auto& [key, values] : axes.items()) {
      if (!values.is_array() || values.empty()) {
        return Error{grid_path + ": grid." + key + ": expected a non-empty list of values"};
      }
      if (static_cast<double>(sets.size()) * static_cast<double>(values.size()) > static_cast<double>(kMaxSweepRuns)) {
        return Error{grid_path + ": grid." + key + ": the grid makes more than " + std::to_string(kMaxSweepRuns) +
                     " runs: split it into several sweeps"};
      }
      std::vector<std::vector<configs::Override>> product;
      for (const auto& set : sets) {
        for (const auto& value : values) {
          auto next = set;
          next.push_back({key, value});
          product.push_back(std::move(next));
        }
      }
      sets = std::move(product);
    }
  }
  auto traces = list_of(*grid, grid_path, "traces", json::array({nullptr}));
  if (!traces) return traces.error();
  auto seeds = list_of(*grid, grid_path, "seeds", json::array({nullptr}));
  if (!seeds) return seeds.error();
  for (std::size_t i = 0; i < seeds->size(); ++i) {
    const json& seed = (*seeds)[i];
    if (!seed.is_null() && !seed.is_number_unsigned()) {
      return Error{grid_path + ": seeds[" + std::to_string(i) + "]: expected an integer in [0, 2^64)"};
    }
  }

  // Every run's config is resolved and checked before the first starts (about 7 kB and
  // 0.15 ms each): a bound keeps a mistyped grid from taking minutes and gigabytes.
  if (const double runs = static_cast<double>(sets.size()) * static_cast<double>(traces->size()) *
                          static_cast<double>(seeds->size());
      runs > static_cast<double>(kMaxSweepRuns)) {
    return Error{grid_path + ": the grid makes " + number_text(runs) + " runs, more than " +
                 std::to_string(kMaxSweepRuns) + ": split it into several sweeps"};
  }
  for (const auto& set : sets) {
    for (const auto& trace : *traces) {
      if (!trace.is_null() && !trace.is_string()) return Error{grid_path + ": traces: expected paths (or null)"};
      for (const auto& seed : *seeds) {
        SweepRun run;
        run.index = plan.runs.size();
        run.overrides = set;
        const std::string where = grid_path + ": run " + std::to_string(run.index) + ": ";
        auto config = configs::load_scenario_with(plan.config_path, set);
        if (!config) return Error{where + config.error().message};
        if (!trace.is_null()) {
          run.trace = beside(grid_path, trace.get<std::string>());
          if (!std::filesystem::is_regular_file(*run.trace)) return Error{where + *run.trace + ": no such trace file"};
          auto spec = trace_file_spec(*run.trace, "auto");
          if (!spec) return Error{where + spec.error().message};
          config->workload.source = *spec;
        }
        if (!seed.is_null()) config->seed = seed.get<std::uint64_t>();
        run.seed = config->seed;
        run.config = std::move(*config);
        plan.runs.push_back(std::move(run));
      }
    }
  }
  for (const auto& run : plan.runs) {
    for (const auto& o : run.overrides) {
      if (std::find(plan.override_keys.begin(), plan.override_keys.end(), o.path) == plan.override_keys.end()) {
        plan.override_keys.push_back(o.path);
      }
    }
  }
  json runs = json::array();
  for (const auto& run : plan.runs) {
    json overrides = json::object();
    for (const auto& o : run.overrides) overrides[o.path] = o.value;
    runs.push_back({{"overrides", overrides}, {"trace", run.trace ? json(*run.trace) : json()}, {"seed", run.seed}});
  }
  plan.document = {{"config", plan.config_path}, {"runs", runs}};
  return plan;
}

}  // namespace meshsim::cli
