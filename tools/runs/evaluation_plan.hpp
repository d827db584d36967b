#pragma once
// What `meshsim eval` plays, resolved from its options and the policies before any play:
// the recipe and its rl spec, the catalog, the workloads, the evaluated and tuning windows.

#include <string>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "rl/env/evaluation.hpp"
#include "sim/engine/expected.hpp"
#include "tools/runs/evaluation_options.hpp"
#include "tools/runs/evaluation_run.hpp"
#include "traces/episode_workload.hpp"

namespace meshsim::cli {

// What the plays need, resolved from the options and the policies.
struct EvalPlan {
  std::string config_path;
  configs::ScenarioConfig base;
  configs::Catalog catalog;
  traces::SharedWorkload recipe_workload;  // the baselines are tuned on its training windows
  traces::SharedWorkload workload;         // the evaluated one: the recipe's, or another
  std::string workload_name;
  bool other_workload = false;
  std::vector<rl::EvalWindow> windows;  // evaluated
  std::vector<rl::EvalWindow> tuning;   // the recipe's training windows
  rl::BaselineGrids grids;          // the flags', with the capacity model read
};

// The plan, every flag and policy checked; the first problem is the error.
Expected<EvalPlan> plan_evaluation(const EvalCommandOptions& options, const std::vector<EvalPolicy>& policies);

}  // namespace meshsim::cli
