#pragma once

// The rows of eval's and train's CSVs (tuning.csv, validation.csv) as the evaluation
// protocol's outcomes, so a test can ask rl::pick which row the command should have chosen.

#include <map>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"

namespace meshsim::cli::testing {

inline std::vector<rl::Outcome> outcomes_of(const std::vector<std::map<std::string, std::string>>& rows) {
  std::vector<rl::Outcome> outcomes;
  for (const auto& row : rows) {
    rl::Outcome o;
    o.slo_attainment = std::stod(row.at("slo_attainment"));
    o.gpu_hours = std::stod(row.at("gpu_hours"));
    outcomes.push_back(o);
  }
  return outcomes;
}

}  // namespace meshsim::cli::testing
