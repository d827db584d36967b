#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim models`: the catalog's models (parameters, active parameters, KV bytes per
// token, context), or with --config what a scenario's model and servers become
// (deployment_report.hpp), so a what-if's deployment is seen before it runs.
struct ModelsCommandOptions {
  std::string config_path;             // empty: list the catalog's models
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one
  std::vector<std::string> sets;       // --set key.path=value on the scenario, in order
};
int run_models_command(const ModelsCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
