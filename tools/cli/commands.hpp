#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"
#include "tools/runs/command_inputs.hpp"

namespace meshsim::cli {

// `meshsim replay`: command-line values; unset ones come from the config.
struct ReplayCommandOptions {
  std::string config_path;           // empty: the bundled default scenario
  std::optional<std::string> trace;  // a trace file instead of the config's workload
  std::string trace_format = "auto"; // auto: by extension (.csv azure, .jsonl mooncake)
  std::string out_dir = "meshsim-out";
  std::optional<std::string> seed;     // an integer in [0, 2^64), checked by the command
  std::optional<double> rate_scale;
  std::optional<double> until_s;
  std::optional<std::string> trace_events;  // write a Chrome/Perfetto trace JSON here
  std::optional<std::string> autoscaler;    // a policy name, overriding the config's
  bool scaling_log = false;                 // print the ScalingManager's log lines (stderr)
  bool quiet = false;                // no summary table
  std::optional<std::string> metrics_listen;  // --metrics-port [HOST:]PORT: live Prometheus metrics
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one
  std::vector<std::string> sets;       // --set key.path=value, in order (summary.json records them)
};

int run_replay_command(const ReplayCommandOptions& options, std::ostream& out, std::ostream& err);

// `meshsim fit-trace`: summarises a trace and prints a generator fitted to it.
struct FitCommandOptions {
  std::string trace;
  std::string trace_format = "auto";
  std::string name = "fitted";
};
int run_fit_command(const FitCommandOptions& options, std::ostream& out, std::ostream& err);

// `meshsim calibrate`: fits roofline factors to every deployment of a profile CSV whose
// model and SKU the catalog knows; prints perf_fits.json on `out`, a MAPE table on `err`.
struct CalibrateCommandOptions {
  std::string profile;
  std::string catalog;  // the user's hardware.json and models.json over the bundled ones; empty: none
};
int run_calibrate_command(const CalibrateCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
