#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

struct ComparePresetsOptions {
  std::string config_path;  // empty: configs/scenarios/shared-cluster-synthetic.json
  std::vector<std::string> sets;  // --set key.path=value on the scenario, in order
  std::vector<std::string> presets = {"HIGH", "MEDIUM", "LOW"};  // names or aliases
  std::vector<std::string> policy_files;  // update_preemption_policy objects (+ "name")
  std::optional<std::string> seed;  // the first seed (default: the scenario's)
  std::uint64_t seeds = 1;          // each policy runs under this many seeds from the first
  std::optional<double> until_s;
  unsigned threads = 0;  // 0: one per core
  std::string out_dir = "meshsim-presets";
  bool plot = true;      // presets.png through tools/plot_presets.py (python3-matplotlib)
};

// Runs one fixed shared-cluster scenario under each preset and policy file (and seed), on
// threads (each run is its own simulation, so results are those of running them one by
// one), and prints a table; writes presets.csv, preemptions.csv (and presets.png) to out_dir.
int run_compare_presets_command(const ComparePresetsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
