#include "tools/cli/error_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meshsim::cli {

std::optional<double> measured_error(double predicted, double measured) {
  if (!(measured > 0)) return std::nullopt;
  return (predicted - measured) / measured;
}

std::string percent_or_dash(const std::optional<double>& error, int width, int decimals) {
  char text[32];
  if (error) {
    std::snprintf(text, sizeof text, "%+*.*f%%", width - 1, decimals, 100 * *error);
  } else {
    std::snprintf(text, sizeof text, "%*s", width, "-");
  }
  return text;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace meshsim::cli
