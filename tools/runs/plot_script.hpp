#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// Draws `png` with tools/<script_name> (`args`, then --out png; a python3-matplotlib
// plot): true when drawn. Plots are optional where they cannot be drawn: false, with a
// note on `err`, without python3-matplotlib (the scripts exit 77) or with nothing to draw.
// A PNG the script could not write (a full disk, a file-size limit) is an output error.
Expected<bool> draw_plot(const std::string& script_name, const std::vector<std::string>& args,
                         const std::string& png, std::ostream& err);

}  // namespace meshsim::cli
