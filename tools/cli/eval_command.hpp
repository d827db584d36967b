#pragma once

#include <iosfwd>

#include "tools/runs/evaluation_options.hpp"

namespace meshsim::cli {

// Writes tuning.csv (every baseline parameter on the training windows, the chosen ones
// marked), eval.csv (every play on the evaluated windows: policies, tuned baselines, the
// target tracking grid played on the window, the right-sizing bound's plays, the oracle
// and the hindsight static sizes), verdicts.csv (per policy, window and delay: the
// cheapest tuned baseline at its SLO attainment or better, its cost against the cheapest
// meeting the SLO target, the fronts at equal SLO, the gap to the bound closed),
// instances.csv and eval.png; prints per window and delay the table and the verdicts.
int run_eval_command(const EvalCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace meshsim::cli
