#pragma once

#include <ostream>
#include <string>

namespace meshsim::cli {

// `meshsim calibrate --reference CSV`: fits the step-time model's coefficients, per SKU,
// to the rows of a serving reference file the server kept up with; prints step_model.json
// (stdout) and the fit's per-row figures (stderr).
int run_calibrate_reference(const std::string& reference, const std::string& catalog, std::ostream& out,
                            std::ostream& err);

struct ValidateCommandOptions {
  std::string reference;
  std::string catalog;  // the user's catalog folder over the bundled one; empty: none
  bool json = false;
  std::uint64_t seed = 42;
  // The load generator's request timeout (0: none). inference-perf's client gives up after
  // 300 s: the reference file's E2E P99 stops at 298 s and its failures are those.
  double client_timeout_s = 300;
};
// `meshsim validate --reference CSV`: replays each row's deployment and workload and
// prints predicted against measured latencies, then the median absolute errors.
int run_validate_command(const ValidateCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
