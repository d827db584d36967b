#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim capacity`: how much deployment a load needs, or how much load a deployment
// takes, at an SLO target, by a search over replays of a static deployment (the
// scenario's autoscaler is off). Every probe's figures go to capacity.csv (and
// capacity.png), the answer to one line on the console.
struct CapacityCommandOptions {
  std::string config_path;          // empty: the bundled default scenario
  std::vector<std::string> sets;    // --set key.path=value, in order
  std::optional<std::string> trace;
  std::string trace_format = "auto";
  std::optional<std::string> seed;
  std::optional<double> rate_scale;  // the load instances are found for (default: the config's)
  std::optional<double> until_s;
  double warmup_s = 0;  // the requests of the workload's first seconds are served, not judged
  std::string find = "instances";    // instances: the fewest for the load; rate: the most load
  std::string pool;                  // the start_state group's tag to size (empty: the first group)
  double target = 0.99;              // SLO attainment to reach
  std::uint32_t max_instances = 256;
  std::optional<double> precision;   // rate only: the answer within a factor of 1 + precision (unset: the question's default)
  unsigned threads = 0;              // 0: one per core
  std::string out_dir = "meshsim-capacity";
  bool plot = true;
  std::optional<std::string> catalog;
  // SKU[:TP] entries (h100-80gb:4,h200-141gb:2): the fewest instances of each meeting the
  // target at the load, with their GPUs, servers and price, in one table (compare.csv,
  // compare.png); empty: one search of the scenario's own deployment.
  std::vector<std::string> compare_skus;
};
int run_capacity_command(const CapacityCommandOptions& options, std::ostream& out, std::ostream& err);
// --compare-skus (run_capacity_command calls it when given).
int run_compare_skus(const CapacityCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
