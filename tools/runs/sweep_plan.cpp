#include "tools/runs/sweep_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "configs/config_file.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/runs/command_inputs.hpp"
#include "tools/runs/run_inputs.hpp"

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

// `inner` is set whenever `outer` is: it is `outer` or a key inside it ("run.until_s" in "run").
bool covered_by(const std::string& inner, const std::string& outer) {
  return inner.compare(0, outer.size(), outer) == 0 && (inner.size() == outer.size() || inner[outer.size()] == '.');
}

// The keys a value sets at `path`: {"max_num_seqs": 8} at serving.vllm sets
// serving.vllm.max_num_seqs (a list or an empty object is one value).
void leaves_of(const std::string& path, const json& value, std::vector<std::string>& out) {
  if (!value.is_object() || value.empty()) {
    out.push_back(path);
    return;
  }
  for (const auto& [key, inner] : value.items()) leaves_of(path + "." + key, inner, out);
}

// One override of a run, in the order a run applies them: --set first (on the base), then
// its list entry's keys, then the grid's keys.
struct Given {
  std::string name;                 // how an error names it: "--set run.until_s", "grid.seed"
  std::string path;
  std::vector<std::string> leaves;  // what its values set (the grid's: all of its values')
};

// The first override after `at` in `order` that sets every leaf of order[at] again, or null
// when one of its leaves is played.
const Given* overridden(const std::vector<const Given*>& order, std::size_t at) {
  const Given* by = nullptr;
  for (const std::string& leaf : order[at]->leaves) {
    const auto later = std::find_if(order.begin() + static_cast<std::ptrdiff_t>(at) + 1, order.end(),
                                    [&](const Given* g) { return covered_by(leaf, g->path); });
    if (later == order.end()) return nullptr;
    if (by == nullptr) by = *later;
  }
  return by;
}

// Every value the grid file and --set give is played in some run: a key the keys applied
// after it set again in every run (a --set under a grid key, a list key under another) is
// refused, naming both, and so is a key that would share a column of sweep.csv with the
// run, folder, trace or status columns (a "seed" key is shown in the seed column).
Status check_keys_used(const std::string& grid_path, const std::vector<configs::Override>& sets,
                       const std::vector<std::vector<configs::Override>>& list,
                       const std::vector<std::pair<std::string, std::vector<json>>>& axes) {
  const auto given = [](std::string name, const std::string& path, const std::vector<json>& values) {
    Given g{std::move(name), path, {}};
    for (const json& value : values) leaves_of(path, value, g.leaves);
    return g;
  };
  std::vector<Given> set_given, axis_given;
  for (const configs::Override& o : sets) set_given.push_back(given("--set " + o.path, o.path, {o.value}));
  for (const auto& [key, values] : axes) axis_given.push_back(given(grid_path + ": grid." + key, key, values));
  std::vector<std::vector<Given>> list_given(list.size());
  for (std::size_t e = 0; e < list.size(); ++e) {
    for (const configs::Override& o : list[e]) {
      list_given[e].push_back(given(grid_path + ": list[" + std::to_string(e) + "]." + o.path, o.path, {o.value}));
    }
  }
  // A --set is played if some list entry's runs play one of its keys.
  std::vector<bool> set_played(set_given.size(), false);
  std::vector<const Given*> set_overrider(set_given.size(), nullptr);
  for (std::size_t e = 0; e < list.size(); ++e) {
    std::vector<const Given*> order;
    for (const Given& g : set_given) order.push_back(&g);
    for (const Given& g : list_given[e]) order.push_back(&g);
    for (const Given& g : axis_given) order.push_back(&g);
    for (std::size_t i = set_given.size(); i < order.size(); ++i) {
      const std::string& path = order[i]->path;
      if (path == "run" || path == "folder" || path == "trace" || path == "status") {
        return Error{order[i]->name + ": sweep.csv's " + path + " column is its own: give the keys inside it"};
      }
      if (const Given* by = overridden(order, i)) {
        return Error{order[i]->name + ": " + by->name + " sets it again in every run, so it would never be played"};
      }
    }
    for (std::size_t i = 0; i < set_given.size(); ++i) {
      const Given* by = overridden(order, i);
      if (by == nullptr) set_played[i] = true;
      else if (set_overrider[i] == nullptr) set_overrider[i] = by;
    }
  }
  for (std::size_t i = 0; i < set_given.size(); ++i) {
    if (!set_played[i]) {
      return Error{set_given[i].name + ": " + set_overrider[i]->name +
                   " sets it again in every run, so it would never be played"};
    }
  }
  return Ok{};
}

// The list's entries: each a set of overrides.
Expected<std::vector<std::vector<configs::Override>>> read_list_sets(const json& list, const std::string& grid_path) {
  std::vector<std::vector<configs::Override>> sets;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& entry = list[i];
    if (!entry.is_object()) return Error{grid_path + ": list[" + std::to_string(i) + "]: expected {\"key.path\": value}"};
    std::vector<configs::Override> set;
    for (const auto& [key, value] : entry.items()) {
      // A null would reset the key to its default, and leave the run's CSV cell empty.
      if (value.is_null()) {
        return Error{grid_path + ": list[" + std::to_string(i) + "]." + key +
                     ": null is not a value (leave the key out to keep the scenario's)"};
      }
      set.push_back({key, value});
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

// The grid's keys and their values; `runs` (the runs so far) is multiplied by each key's count
// and refused past kMaxSweepRuns as soon as it passes.
Expected<std::vector<std::pair<std::string, std::vector<json>>>> read_axes(const json& axes, const std::string& grid_path,
                                                                           double& runs) {
  if (!axes.is_object()) return Error{grid_path + ": grid: expected {\"key.path\": [values...]}"};
  std::vector<std::pair<std::string, std::vector<json>>> out;
  for (const auto& [key, values] : axes.items()) {
    if (!values.is_array() || values.empty()) {
      return Error{grid_path + ": grid." + key + ": expected a non-empty list of values"};
    }
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (values[v].is_null()) {
        return Error{grid_path + ": grid." + key + "[" + std::to_string(v) +
                     "]: null is not a value (leave the key out to keep the scenario's)"};
      }
    }
    runs *= static_cast<double>(values.size());
    if (runs > static_cast<double>(kMaxSweepRuns)) {
      return Error{grid_path + ": grid." + key + ": the grid makes more than " + std::to_string(kMaxSweepRuns) +
                   " runs: split it into several sweeps"};
    }
    out.emplace_back(key, std::vector<json>(values.begin(), values.end()));
  }
  return out;
}

// The traces' files, each found and its format known (null: the config's workload).
Expected<std::vector<std::optional<traces::TraceFileSpec>>> read_traces(const json& traces, const std::string& grid_path) {
  std::vector<std::optional<traces::TraceFileSpec>> out;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const json& trace = traces[i];
    if (trace.is_null()) {
      out.emplace_back();
      continue;
    }
    if (!trace.is_string()) return Error{grid_path + ": traces: expected paths (or null)"};
    const std::string path = beside(grid_path, trace.get<std::string>());
    const std::string where = grid_path + ": traces[" + std::to_string(i) + "]: ";
    if (configs::path_kind(path) == configs::PathKind::kMissing) return Error{where + path + ": no such trace file"};
    auto spec = trace_file_spec(path, "auto");
    if (!spec) return Error{where + spec.error().message};
    out.push_back(std::move(*spec));
  }
  return out;
}

}  // namespace

SweepRun SweepPlan::run(std::size_t index) const {
  SweepRun run{index, {}, {}, seeds_[index % seeds_.size()]};
  // The index in mixed radix, fastest first: seed, trace, the grid's keys last to first,
  // then the list entry.
  std::size_t rest = index / seeds_.size();
  run.trace = traces_[rest % traces_.size()];
  rest /= traces_.size();
  std::vector<const nlohmann::json*> values(axes_.size());
  for (std::size_t a = axes_.size(); a-- > 0;) {
    values[a] = &axes_[a].second[rest % axes_[a].second.size()];
    rest /= axes_[a].second.size();
  }
  run.overrides = sets_[rest];
  for (std::size_t a = 0; a < axes_.size(); ++a) run.overrides.push_back({axes_[a].first, *values[a]});
  return run;
}

Expected<configs::ScenarioConfig> SweepPlan::config_of(const SweepRun& run) const {
  const std::string where = grid_path_ + ": run " + std::to_string(run.index) + ": ";
  json tree = base_;
  for (const configs::Override& o : run.overrides) {
    if (auto applied = configs::apply_override(tree, o); !applied) {
      return Error{where + config_path + ": " + applied.error().message};
    }
  }
  auto config = configs::parse_scenario(tree, config_path);
  if (!config) return Error{where + config.error().message};
  if (run.trace) config->workload.source = *run.trace;
  if (run.seed) config->seed = *run.seed;
  if (catalog_) config->catalog = *catalog_;
  return config;
}

Expected<SweepPlan> read_sweep_plan(const std::string& grid_path, const std::optional<std::string>& catalog,
                                    const std::vector<std::string>& sets, const RunCheck& check) {
  auto grid = configs::read_config_file(grid_path);
  if (!grid) return grid.error();
  if (!grid->is_object()) return Error{grid_path + ": expected an object with config, grid, list, traces, seeds"};
  for (const auto& [key, value] : grid->items()) {
    if (key != "config" && key != "grid" && key != "list" && key != "traces" && key != "seeds" && key != "comment") {
      return Error{grid_path + ": " + key + ": unknown key (expected config, grid, list, traces, seeds, comment)"};
    }
  }
  SweepPlan plan;
  plan.grid_path_ = grid_path;
  plan.catalog_ = catalog;
  if (grid->contains("config")) {
    if (!(*grid)["config"].is_string()) return Error{grid_path + ": config: expected the path of a scenario file"};
    plan.config_path = beside(grid_path, (*grid)["config"].get<std::string>());
  } else {
    plan.config_path = configs::default_scenario_path();
  }
  auto base = configs::read_config_file(plan.config_path);
  if (!base) return Error{grid_path + ": config: " + base.error().message};
  plan.base_ = std::move(*base);
  // --set changes the base scenario, before any run's overrides (refused under a grid key).
  std::vector<configs::Override> set_overrides;
  for (const std::string& assignment : sets) {
    auto parsed = configs::parse_override(assignment);
    if (!parsed) return Error{"--set: " + parsed.error().message};
    set_overrides.push_back(*parsed);
    if (auto applied = configs::apply_override(plan.base_, *parsed); !applied) {
      return Error{"--set: " + plan.config_path + ": " + applied.error().message};
    }
  }

  // The override sets (each list entry x the grid's product), traces and seeds.
  auto list = list_of(*grid, grid_path, "list", json::array({json::object()}));
  if (!list) return list.error();
  auto list_sets = read_list_sets(*list, grid_path);
  if (!list_sets) return list_sets.error();
  plan.sets_ = std::move(*list_sets);
  double runs = static_cast<double>(plan.sets_.size());
  if (grid->contains("grid")) {
    auto axes = read_axes((*grid)["grid"], grid_path, runs);
    if (!axes) return axes.error();
    plan.axes_ = std::move(*axes);
  }
  if (auto used = check_keys_used(grid_path, set_overrides, plan.sets_, plan.axes_); !used) return used.error();
  auto traces = list_of(*grid, grid_path, "traces", json::array({nullptr}));
  if (!traces) return traces.error();
  auto seeds = list_of(*grid, grid_path, "seeds", json::array({nullptr}));
  if (!seeds) return seeds.error();
  // Seeds come from one place: "seeds", or a "seed" key of the grid or list, not both (the
  // seeds would win silently, and the CSV would have two seed columns).
  if (grid->contains("seeds")) {
    const bool in_grid = grid->contains("grid") && (*grid)["grid"].contains("seed");
    const bool in_list = std::any_of(plan.sets_.begin(), plan.sets_.end(), [](const auto& set) {
      return std::any_of(set.begin(), set.end(), [](const configs::Override& o) { return o.path == "seed"; });
    });
    if (in_grid || in_list) {
      return Error{grid_path + ": " + (in_grid ? "grid" : "list") +
                   ".seed: give the seeds in one place, \"seeds\" or a \"seed\" key, not both"};
    }
  }
  for (std::size_t i = 0; i < seeds->size(); ++i) {
    const json& seed = (*seeds)[i];
    if (!seed.is_null() && !seed.is_number_unsigned()) {
      return Error{grid_path + ": seeds[" + std::to_string(i) + "]: expected an integer in [0, 2^64)"};
    }
    plan.seeds_.push_back(seed.is_null() ? std::nullopt : std::optional(seed.get<std::uint64_t>()));
  }
  runs *= static_cast<double>(traces->size()) * static_cast<double>(seeds->size());
  if (runs > static_cast<double>(kMaxSweepRuns)) {
    return Error{grid_path + ": the grid makes " + number_text(runs) + " runs, more than " +
                 std::to_string(kMaxSweepRuns) + ": split it into several sweeps"};
  }
  auto trace_specs = read_traces(*traces, grid_path);
  if (!trace_specs) return trace_specs.error();
  plan.traces_ = std::move(*trace_specs);
  plan.count_ = static_cast<std::size_t>(runs);

  // Every run resolved and checked before the first starts, one at a time (none is kept).
  std::set<std::string> inputs_seen;
  for (std::size_t i = 0; i < plan.count_; ++i) {
    const SweepRun run = plan.run(i);
    auto config = plan.config_of(run);
    if (!config) return config.error();
    if (check) {
      if (const Status checked = check(*config); !checked) {
        return Error{grid_path + ": run " + std::to_string(i) + ": " + plan.config_path + ": " + checked.error().message};
      }
    }
    for (const auto& o : run.overrides) {
      if (o.path == "seed") continue;  // shown in the seed column
      if (std::find(plan.override_keys.begin(), plan.override_keys.end(), o.path) == plan.override_keys.end()) {
        plan.override_keys.push_back(o.path);
      }
    }
    if (inputs_seen.insert(config->catalog.value_or("") + '\n' + workload_file(*config)).second) {
      plan.distinct_inputs.push_back(std::move(*config));
    }
  }

  // The runs as the grid makes them (resolved paths; the defaults of seeds and traces as
  // null): the same document means the same runs in the same order.
  json axes = json::array();
  for (const auto& [key, values] : plan.axes_) axes.push_back({key, values});
  json trace_paths = json::array();
  for (const auto& trace : plan.traces_) trace_paths.push_back(trace ? json(trace->path) : json());
  plan.document = {{"config", plan.config_path}, {"list", *list}, {"grid", axes}, {"traces", trace_paths},
                   {"seeds", *seeds}};
  // Only when given, so a sweep made without --set resumes as before.
  if (!sets.empty()) plan.document["set"] = sets;
  return plan;
}

}  // namespace meshsim::cli
