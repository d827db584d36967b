#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim capacity-model`: fits the capacity model (sim/autoscale/capacity_model.hpp)
// on a recipe's training days and judges it on its validation days. Stretches of the
// recipe's workload are measured in the simulator (what 1, 2, 4 and 8 instances sustain at
// the SLO target on each stretch's own requests); every rung of the features' ladder is
// fitted on the training stretches and its error printed on both; the chosen rung is
// written with its validation error and whether it is accepted.
struct CapacityModelCommandOptions {
  std::string config_path;        // a recipe (scenario with an rl object)
  std::vector<std::string> sets;  // --set key.path=value, in order
  std::optional<std::string> catalog;
  std::optional<std::string> seed;
  std::size_t stretches = 48;             // training stretches measured
  std::size_t validation_stretches = 24;  // validation stretches measured
  double stretch_s = 600;                 // ServeGen's windows
  std::uint64_t least_requests = 200;     // a stretch with fewer is not a sample
  std::string features = "burstiness";    // the rung written
  double accept_error = 0.10;             // the validation error a model is accepted at
  std::string out_dir = "meshsim-capacity-model";
};
int run_capacity_model_command(const CapacityModelCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
