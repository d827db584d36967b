#pragma once

// How `meshsim validate` and `calibrate` sum up predictions against measurements.

#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// (predicted - measured) / measured where there is a measurement (> 0), else none: never
// a figure made up from nothing.
std::optional<double> measured_error(double predicted, double measured);
// "+12.3%" or "-" (no figure), `width` wide.
std::string percent_or_dash(const std::optional<double>& error, int width, int decimals = 1);
// The median (0 over nothing).
double median(std::vector<double> values);
// numpy's default percentile of sorted values: linear between the closest ranks (0 over nothing).
double percentile(const std::vector<double>& sorted, double p);

}  // namespace meshsim::cli
