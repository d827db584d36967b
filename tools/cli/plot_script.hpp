#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace meshsim::cli {

// Runs one of tools/*.py (python3-matplotlib plots) with `args`, output discarded;
// true when it succeeded. Plots are optional: a caller notes the missing PNG and goes on.
bool run_plot_script(const std::string& script_name, const std::vector<std::string>& args);

// Draws `png` with tools/<script_name> (`args`, then --out png): true when drawn, else
// a note on `err` that the PNG is missing and what it needs.
bool draw_plot(const std::string& script_name, std::vector<std::string> args, const std::string& png,
               std::ostream& err);

}  // namespace meshsim::cli
