#pragma once

#include <ostream>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::cli {

// `meshsim calibrate --reference CSV`: fits the step-time model's coefficients, per SKU,
// to the rows of a serving reference file the server kept up with; prints step_model.json
// (stdout) and the fit's per-row figures (stderr).
// Several files fit together, per SKU: either layout (serving_reference.hpp's, or a
// closed-loop table's, of whose rows only the shapes in `fit_on` are taken; every shape
// when empty). `skus` (names or aliases; empty: all) keeps only those SKUs' rows.
struct CalibrateReferenceOptions {
  std::vector<std::string> references;
  std::string fit_on;
  std::vector<std::string> skus;
  std::string catalog;
};
int run_calibrate_reference(const CalibrateReferenceOptions& options, std::ostream& out, std::ostream& err);

struct ValidateCommandOptions {
  std::string reference;
  std::string catalog;  // the user's catalog folder over the bundled one; empty: none
  bool json = false;
  std::uint64_t seed = 42;
  // The load generator's request timeout (0: none). inference-perf's client gives up after
  // 300 s: the reference file's E2E P99 stops at 298 s and its failures are those.
  double client_timeout_s = 300;
  // Closed-loop tables: the shapes the fit took ("1024x1024,8192x1024"), whose rows the
  // summary holds apart; and how many requests each client sends (the first is warm-up).
  std::string fit_on;
  std::optional<std::uint32_t> requests_per_client;  // unset: kDefaultRequestsPerClient
};
inline constexpr std::uint32_t kDefaultRequestsPerClient = 8;
// `meshsim validate --reference CSV`: replays each row's deployment and workload and
// prints predicted against measured latencies, then the median absolute errors.
int run_validate_command(const ValidateCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
