#pragma once

// summary.json's "classes" section and its lines in the terminal table: each class of
// service's requests (counting as the run's do), SLO attainment by its own targets,
// goodput and latency.

#include <nlohmann/json.hpp>
#include <string>

#include "sim/metrics/run_metrics.hpp"

namespace meshsim::cli {

// Null without classes. Names and priorities come from the resolved config's "classes";
// rates are over `served_s` seconds, as the run's.
nlohmann::ordered_json classes_summary(const nlohmann::json& resolved_config, const metrics::RunMetrics& metrics,
                                       double served_s);
// One line per class ("" without classes).
std::string format_classes_table(const nlohmann::ordered_json& summary);

}  // namespace meshsim::cli
