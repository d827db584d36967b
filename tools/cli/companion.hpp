#pragma once

// The commands that need a heavy library run in a companion executable built beside
// `meshsim`, so every other command starts without loading it: `train` and `eval` in
// meshsim-rl (LibTorch, Gloo), `sweep` under mpirun in meshsim-mpi (Open MPI). `meshsim`
// parses the command line as they do, then replaces itself with the companion (exec), so
// the process, its output streams, signals and exit status are the companion's.

#include <ostream>
#include <string_view>

namespace meshsim::cli {

// Runs the executable `name` from the folder of this one with the same arguments; returns
// only when it cannot (an error on `err`, exit code 70 when it is missing from the build).
int run_companion(std::string_view name, char** argv, std::ostream& err);

}  // namespace meshsim::cli
