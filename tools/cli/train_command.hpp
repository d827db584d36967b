#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim train`: PPO on the scenario's RL environment (its rl and rl.ppo objects).
struct TrainCommandOptions {
  std::string config_path;           // empty: configs/scenarios/rl-train.json
  std::vector<std::string> sets;     // --set key.path=value on the recipe, in order
  std::optional<std::string> trace;  // a trace file instead of the config's workload
  std::string trace_format = "auto";
  std::string out_dir = "meshsim-train";
  std::optional<std::string> seed;   // the config's seed when unset
  std::optional<std::uint64_t> total_decisions;  // overrides rl.ppo.total_decisions
  std::optional<unsigned> threads;               // overrides rl.ppo.threads
  std::optional<std::uint32_t> max_iterations;   // stop after this many in this invocation
  bool resume = false;  // continue from out_dir/checkpoint
  bool quiet = false;   // no progress lines
  bool plot = true;     // learning_curve.png through tools/plot_learning_curve.py
  // Data-parallel ranks (rl/ppo/rank_group.hpp): unset, mpirun's environment or one.
  std::optional<int> world_size, rank;
  std::string store;        // where the ranks meet: tcp://HOST:PORT or file://PATH
  double timeout_s = 300.0;  // for meeting and for each collective
  std::optional<std::string> metrics_listen;  // --metrics-port [HOST:]PORT: live Prometheus metrics (rank 0)
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one
};

// Trains, printing a progress line per iteration (at most about one a second), and
// writes to out_dir: learning_curve.csv (one row per iteration, written as it goes),
// checkpoint/ (every rl.ppo.checkpoint_every iterations and at the end; `meshsim eval
// --policy out_dir/checkpoint` reads it), config.json (the resolved scenario) and
// learning_curve.png. A folder holding an earlier run is refused unless --resume.
// Over several ranks, every rank runs this with the same config and seed; rank 0 prints
// and writes the outputs (every rank reads the checkpoint on --resume).
int run_train_command(const TrainCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
