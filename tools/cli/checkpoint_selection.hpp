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
// windows. DIR/validation.csv has a row per checkpoint played, and
// DIR/validation_baseline.csv the tuned static size's (and the residual base's) play of
// the same spans.
//
// A run over several recipes (rl.train_also) plays every recipe's spans, each from its
// own tuned size, and holds each recipe to its own required SLO (rl::pick_per_recipe):
// pooled, a recipe with many requests would buy another's SLO. The two CSVs then pool
// the recipes, and DIR/validation_recipes.csv has each recipe's figures per checkpoint.
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
  // Whether the checkpoint saved after `iteration` has its row.
  bool validated(std::uint32_t iteration) const;
  // The tuned static size's figures on the validation spans, for the console.
  std::string baseline_summary() const;

 private:
  // A recipe with validation spans, and what it holds checkpoints to.
  struct Recipe {
    const rl::EnvMember* member = nullptr;
    std::uint32_t start = 1;  // its tuned static size
    double required_slo = 0;  // rl.slo_target, or its residual base's SLO when lower
  };
  // One validation play: a recipe's span at one of its delays.
  struct Play {
    std::size_t recipe = 0;  // in recipes_
    rl::EvalWindow window;
    double delay_s = 0;
  };
  // A contender's plays, pooled per recipe and over all.
  struct Played {
    std::vector<rl::Outcome> recipes;
    rl::Outcome all;
  };
  struct Row {
    std::uint32_t iteration = 0;
    Played played;
  };
  CheckpointSelector(const configs::Catalog& catalog, std::filesystem::path dir);
  Status read_rows(std::uint32_t resumed_after);
  Status write_csv() const;
  Status play_baseline();
  // Every play, contender(i) playing play i.
  Played play_spans(const std::function<rl::Contender(std::size_t)>& contender) const;
  int pick() const;  // the best row, -1 when none played

  const configs::Catalog& catalog_;
  std::filesystem::path dir_;
  std::vector<Recipe> recipes_;
  std::vector<Play> plays_;
  Played baseline_;  // the tuned static sizes on the validation spans
  std::optional<Played> base_;  // a residual policy's target tracking on them
  std::vector<Row> rows_;
  int best_ = -1;  // in rows_
};

}  // namespace meshsim::cli
