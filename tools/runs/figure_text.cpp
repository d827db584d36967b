#include "tools/runs/figure_text.hpp"

#include <cstdio>

namespace meshsim::cli {

std::string fixed_text(double value, int decimals, int width) {
  char text[64];
  std::snprintf(text, sizeof text, "%*.*f", width, decimals, value);
  return text;
}

std::string fixed_or(const std::optional<double>& value, int decimals, std::string_view none, int width) {
  if (value) return fixed_text(*value, decimals, width);
  std::string text(none);
  if (static_cast<int>(text.size()) < width) text.insert(0, static_cast<std::size_t>(width) - text.size(), ' ');
  return text;
}

}  // namespace meshsim::cli
