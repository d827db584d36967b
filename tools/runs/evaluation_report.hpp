#pragma once

// What `meshsim eval` writes and prints of its plays: the four CSV files (committed
// together at the end, so an interrupted evaluation leaves none half written) and the
// console's table and verdicts per evaluated window and scale-up delay.

#include <iosfwd>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"
#include "sim/engine/expected.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/runs/figure_text.hpp"

namespace meshsim::cli {

// A play's name as the tables and CSV files show it: its policy and parameter.
std::string display_name(const rl::Outcome& o);
// The verdict's words for the share of the gap a policy closes: a percentage only where
// one means something (none to all of the gap), else which side of it the policy is.
std::string gap_closed_text(double share);

// The plays of one evaluated window at one scale-up delay.
struct WindowPlays {
  const rl::EvalWindow* window = nullptr;
  double delay_s = 0;
  std::uint32_t start = 0;                    // the instances adaptive policies start at
  std::vector<const rl::Outcome*> policies;   // the evaluated policies' plays
  std::vector<rl::Outcome> tuned;             // the tuned static size, then each family's pick
  const rl::Outcome* oracle = nullptr;        // the oracle heuristic's tuned play
  rl::Fronts fronts;
  bool bounded = false;                       // the right-sizing bound could be played
};

class EvalOutputs {
 public:
  explicit EvalOutputs(const std::string& out_dir);
  // A baseline's play on the training windows, and whether the protocol chose it.
  void tuning_row(double delay_s, const rl::Outcome& o, bool chosen);
  // One window's plays: eval.csv, instances.csv and verdicts.csv rows, and the console's
  // table and verdicts on `out`.
  void report(const WindowPlays& plays, double slo_target, double interval_s, std::ostream& out);
  Status commit();
  // The files' paths, for the console.
  std::string paths() const;

 private:
  void verdict_row(const WindowPlays& plays, const rl::Outcome& o, const rl::Verdict& v);

  AtomicFile tuning_;
  AtomicFile eval_;
  AtomicFile verdicts_;
  AtomicFile series_;
};

}  // namespace meshsim::cli
