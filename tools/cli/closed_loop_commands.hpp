#pragma once

#include <cstddef>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/closed_loop_reference.hpp"
#include "sim/perf/step_calibration.hpp"
#include "tools/cli/reference_commands.hpp"

namespace meshsim::cli {

// Prompt x output shapes ("1024x1024,8192x1024"): the rows of a closed-loop table a fit
// uses (and validate holds apart from the rest). Empty text: none named. Errors name the
// option and the shape.
Expected<std::set<std::string>> parse_shapes(const std::string& option, const std::string& text);

// A closed-loop row as a steady load (Little's law: `clients` requests in the system,
// each E2E = TTFT + (output - 1) x TPOT) on its model in the row's precision.
cluster::SteadyLoad closed_loop_load(const configs::ClosedLoopRow& row, const cluster::ModelSpec& model,
                                     const cluster::SkuSpec& sku);

// Whether the row's clients' KV cache fits the instance at once: a row whose clients wait
// for KV blocks measured queueing, not steps, so a fit leaves it out.
bool clients_fit_kv(const configs::ClosedLoopRow& row, const cluster::ModelSpec& model, const cluster::SkuSpec& sku);

// The loads of a closed-loop table that a step-time fit takes: rows that can be modelled,
// whose shape is in `fit_on` (every shape when empty) and whose clients fit the KV cache;
// the table's model_configs/ are added to `catalog`. Errors name the file and line.
struct ClosedLoopFit {
  std::vector<cluster::SteadyLoad> loads;
  std::vector<std::size_t> lines;  // each load's line
  std::size_t refused = 0, held_out = 0, waiting_for_kv = 0;
};
Expected<ClosedLoopFit> closed_loop_fit_loads(const std::string& path, configs::Catalog& catalog,
                                              const std::set<std::string>& fit_on);

// `meshsim validate` on a closed-loop table: replays each row as its clients (the first
// request of each left out as warm-up) and prints predicted against measured mean TTFT and
// TPOT, then per SKU the median and p90 |error| over the rows not fitted on (`fit_on`) and
// over all; rows it cannot model are listed with the reason and left out.
int run_validate_closed_loop(const ValidateCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
