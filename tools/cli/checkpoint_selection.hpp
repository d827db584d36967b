#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"
#include "rl/env/vector_env.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// Keeps DIR/best: of the checkpoints a training run saves, the one whose policy plays the
// recipe's validation spans best by the protocol's criterion (rl/env/evaluation.hpp: the
// cheapest in GPU-hours reaching rl.slo_target, else the highest SLO attainment; for a
// residual policy, reaching the lower of that and its base's SLO on the same spans), each
// span at every delay the recipe trains at, from the static size tuned on the training
// windows. A run over several recipes (rl.train_also) plays every recipe's spans and
// pools them, each recipe from its own tuned size. DIR/validation.csv has a row per
// checkpoint played, and DIR/validation_baseline.csv the tuned static sizes' (and the
// residual base's) play of the same spans.
class CheckpointSelector {
 public:
  // nullptr when no recipe has validation spans. `resumed_after`: the iteration a
  // resumed run continues from (0 for a new run); validation.csv keeps its rows up to it.
  // `members` (the trained recipes, the first the run's own) must outlive the selector.
  static Expected<std::unique_ptr<CheckpointSelector>> create(std::span<const rl::EnvMember> members,
                                                              const configs::Catalog& catalog,
                                                              std::filesystem::path dir, std::uint32_t resumed_after);
  // Plays `checkpoint`, saved after `iteration`; copies it to DIR/best when it is the best
  // so far. Returns the row's summary for the console.
  Expected<std::string> consider(const std::filesystem::path& checkpoint, std::uint32_t iteration);
  // The tuned static size's figures on the validation spans, for the console.
  std::string baseline_summary() const;

 private:
  struct Row {
    std::uint32_t iteration = 0;
    rl::Outcome outcome;
  };
  // One validation play: a recipe's span at one of its delays, from its tuned size.
  struct Play {
    const rl::EnvMember* member = nullptr;
    rl::EvalWindow window;
    double delay_s = 0;
    std::uint32_t start = 1;  // the recipe's tuned static size
  };
  CheckpointSelector(const configs::Catalog& catalog, std::filesystem::path dir);
  Status write_csv() const;
  Status play_baseline();
  // Every play, contender(i) playing play i, pooled.
  rl::Outcome play_spans(const std::function<rl::Contender(std::size_t)>& contender) const;

  const configs::Catalog& catalog_;
  std::filesystem::path dir_;
  std::vector<Play> plays_;
  // The recipes' tuned static sizes and residual bases' targets, joined by '+': the
  // baseline rows' parameters.
  std::string starts_, base_targets_;
  rl::Outcome baseline_;  // the tuned static sizes on the validation spans
  std::optional<rl::Outcome> base_;  // a residual policy's target tracking on them
  double required_slo_ = 0;  // what pick() holds checkpoints to
  std::vector<Row> rows_;
  int best_ = -1;  // in rows_
};

}  // namespace meshsim::cli
