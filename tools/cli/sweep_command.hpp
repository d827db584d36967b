#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace meshsim::cli {

// `meshsim sweep GRID`: every run of a grid file (tools/cli/sweep_plan.hpp) replayed into
// its own folder OUT/runs/NNNN, with one row of headline metrics per run in OUT/sweep.csv,
// in run order whatever ran where. Threads on one machine; under mpirun, the ranks share
// the runs (rank 0 hands them out and writes the CSV). An OUT that holds another sweep, or
// anything else, is refused; --resume finishes a sweep of the same grid, keeping the runs
// it finished.
struct SweepCommandOptions {
  std::string grid;
  std::string out_dir = "meshsim-sweep";
  unsigned threads = 0;  // 0: one per core, at most one per run (per rank under MPI: 1)
  bool resume = false;
  bool quiet = false;
  std::optional<std::string> metrics_listen;  // --metrics-port [HOST:]PORT: live progress (rank 0)
  std::optional<std::string> catalog;  // --catalog DIR: the user's catalog over the bundled one, for every run
};
int run_sweep_command(const SweepCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
