#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// `meshsim sweep GRID`: every run of a grid file (tools/cli/sweep_plan.hpp) replayed into
// its own folder OUT/runs/NNNN, with one row of headline metrics per run in OUT/sweep.csv,
// in run order whatever ran where. Threads on one machine; under mpirun, the ranks share
// the runs (rank 0 hands them out and writes the CSV). An OUT that holds another sweep, or
// anything else, is refused; --resume finishes a sweep of the same grid and inputs (the
// scenario file, catalogs and traces, by content: sweep.json records them), keeping the
// runs it finished.
struct SweepCommandOptions {
  std::string grid;
  std::string out_dir = "meshsim-sweep";
  unsigned threads = 0;  // 0: one per core, at most one per run (per rank under MPI: 1)
  bool resume = false;
  bool quiet = false;
  std::optional<std::string> metrics_listen;  // --metrics-port [HOST:]PORT: live progress (rank 0)
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one, for every run
  std::vector<std::string> sets;       // --set key.path=value on the base scenario, in order (the grid's keys win)
};
int run_sweep_command(const SweepCommandOptions& options, std::ostream& out, std::ostream& err);

// A finished run's summary.json, as a resumed sweep reads it back: every headline metric a
// number a run can write (counts whole, the SLO attainment in [0, 1], the rest finite and
// >= 0; latencies null when no request finished; the scaling ones may be absent), its request counts adding up. Errors name the
// file and the key.
Expected<nlohmann::json> read_sweep_run_summary(std::string_view text, const std::string& file);
// A finished run's folder as a resumed sweep trusts it: its summary as above, every file a
// run writes present, and requests.csv holding a row per arrived request.
Expected<nlohmann::json> read_finished_run(const std::string& folder);

}  // namespace meshsim::cli
