#pragma once

// A figure as the command line's tables and CSV files print it, and a cell where there is
// no figure (nothing was measured or judged: a figure over nothing is no figure).

#include <optional>
#include <string>
#include <string_view>

namespace meshsim::cli {

// `value` with `decimals` decimals, right-aligned in `width` characters (0: no padding).
std::string fixed_text(double value, int decimals = 2, int width = 0);
// fixed_text(*value, ...), or `none` (right-aligned the same) without a value.
std::string fixed_or(const std::optional<double>& value, int decimals, std::string_view none, int width = 0);

}  // namespace meshsim::cli
