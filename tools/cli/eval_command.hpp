#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim eval`: a trained policy and every baseline of the autoscaler interface on the
// same window of a trace, through the same RL environment and reward.
struct EvalCommandOptions {
  std::string config_path;             // empty: configs/scenarios/rl-train.json
  std::optional<std::string> policy;   // a checkpoint folder of meshsim train; none: baselines only
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one
  std::optional<std::string> trace;    // a trace file instead of the config's workload
  std::string trace_format = "auto";
  std::string out_dir = "meshsim-eval";
  std::optional<std::string> seed;
  double window_start_s = 0.0;         // where the evaluated window starts in the workload
  std::optional<double> window_s;      // its length (simulated seconds); unset: to the workload's end
  double rate_scale = 1.0;             // the window played at this multiple of its rate (covering
                                       // window_s x rate_scale of the workload)
  std::vector<double> delays_s;        // scale-up delays to evaluate at; empty: the config's
  std::vector<double> kv_targets = {0.5, 0.6, 0.7, 0.8, 0.9};  // target tracking on KV use
  std::vector<double> request_targets = {4, 8, 16, 32, 64};      // ... on requests per instance
  std::uint32_t max_static = 32;       // static sizes swept: 1 .. this (and the scaling limit)
  std::optional<std::uint32_t> start_instances;  // where adaptive policies start; unset: the best static size
  bool plot = true;
};

// Writes eval.csv (every run: policy, parameter, start size, SLO attainment, TTFT/TBT
// p50/p99, GPU-hours, scaling actions, reward), instances.csv (instances over time of the table's
// policies) and eval.png; prints per delay a table of the policy, the best static size,
// elastic, the target-tracking front's best, and the oracle, with the share of the gap
// between target tracking and the oracle the policy closes.
int run_eval_command(const EvalCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
