#pragma once
// What `meshsim eval` (and the Python package's evaluate) is asked: the recipe, the
// policies, the windows and delays, the baselines' grids.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"

namespace meshsim::cli {

// `meshsim eval`: trained policies and every baseline of the autoscaler interface, judged
// by the protocol of rl/env/evaluation.hpp through the same RL environment and reward.
struct EvalCommandOptions {
  // The recipe: cluster, workload and its splits. Empty: the first policy's run's
  // config.json, else configs/scenarios/rl-train.json.
  std::string config_path;
  std::vector<std::string> sets;  // --set key.path=value on the recipe, in order
  std::vector<std::string> policies;   // checkpoint folders of meshsim train; none: baselines only
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one
  // Evaluate on another workload than the recipe's (a trace file, or a scenario file's
  // workload); baselines are still tuned on the recipe's training windows.
  std::optional<std::string> trace;
  std::optional<std::string> workload_config;
  std::string trace_format = "auto";
  std::string out_dir = "meshsim-eval";
  std::optional<std::string> seed;
  // The recipe's spans evaluated: test | validation (unset: test). Refused beside a window
  // or another workload, which it would not choose.
  std::optional<std::string> split;
  std::string split_name() const { return split.value_or("test"); }
  std::optional<double> window_start_s;  // one window instead (workload seconds)
  std::optional<double> window_s;        // its length (simulated seconds); unset: to the workload's end
  double rate_scale = 1.0;               // the windows played at this multiple of their rate
  bool allow_training_overlap = false;   // judge a window that overlaps the training windows
  std::vector<double> delays_s;          // scale-up delays to evaluate at; empty: every one the recipe trains at
  rl::BaselineGrids grids;
  // A capacity model file (meshsim capacity-model's): capacity-units target tracking is
  // tuned and judged beside the policies.
  std::optional<std::string> capacity_model;
  std::uint32_t max_static = 32;  // static sizes swept: 1 .. this (and the scaling limit)
  bool plot = true;
};

}  // namespace meshsim::cli
