#pragma once

#include <string>
#include <vector>

namespace meshsim::cli {

// Runs one of tools/*.py (python3-matplotlib plots) with `args`, output discarded;
// true when it succeeded. Plots are optional: a caller notes the missing PNG and goes on.
bool run_plot_script(const std::string& script_name, const std::vector<std::string>& args);

}  // namespace meshsim::cli
