#pragma once

// Profile CSVs in SplitwiseSim's perf_model.csv layout, read into the rows the
// performance models are fitted to (sim/perf/perf_profile.hpp).

#include <string>
#include <vector>

#include "sim/engine/expected.hpp"
#include "sim/perf/perf_profile.hpp"

namespace meshsim::configs {

// Reads a profile CSV (columns model, hardware, tensor_parallel, prompt_size, batch_size,
// token_size, prompt_time, token_time; others ignored). Errors name file:line and column.
Expected<std::vector<cluster::ProfileRow>> read_profile_csv(const std::string& path);

}  // namespace meshsim::configs
