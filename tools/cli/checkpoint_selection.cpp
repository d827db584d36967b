#include "tools/cli/checkpoint_selection.hpp"

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "configs/config_file.hpp"
#include "rl/env/scaling_env.hpp"
#include "rl/ppo/checkpoint_folder.hpp"
#include "rl/ppo/policy_runner.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/runs/atomic_file.hpp"

namespace meshsim::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHeader = "iteration,slo_attainment,gpu_hours,mean_instances,actions_per_hour,reward,best";
// A run over several recipes: each recipe's figures (recipe 0 the run's own, then
// rl.train_also's in order).
constexpr const char* kRecipesHeader =
    "iteration,recipe,slo_attainment,gpu_hours,mean_instances,actions_per_hour,reward";
constexpr const char* kBaselineHeader =
    "policy,parameter,slo_attainment,gpu_hours,mean_instances,actions_per_hour,reward";

// A play's figures as both CSVs write them: slo_attainment ... reward.
std::string figures(const rl::Outcome& o) {
  char cells[160];
  std::snprintf(cells, sizeof cells, "%.6f,%.6f,%.4f,%.3f,%.6f", o.slo_attainment, o.gpu_hours, o.mean_instances,
                o.actions_per_hour, o.reward);
  return cells;
}

}  // namespace

CheckpointSelector::CheckpointSelector(const configs::Catalog& catalog, fs::path dir)
    : catalog_(catalog), dir_(std::move(dir)) {}

Expected<std::unique_ptr<CheckpointSelector>> CheckpointSelector::create(std::span<const rl::EnvMember> members,
                                                                         const configs::Catalog& catalog, fs::path dir,
                                                                         std::uint32_t resumed_after) {
  std::unique_ptr<CheckpointSelector> s(new CheckpointSelector(catalog, std::move(dir)));
  engine::ThreadPool pool(0);
  for (const rl::EnvMember& member : members) {
    const configs::ScenarioConfig& config = member.config;
    if (config.rl->validation.empty()) continue;
    // Where every adaptive policy starts: the static size tuned on the training windows.
    const auto tuned =
        rl::tune_static_size(config, catalog, member.workload, config.scaling.manager.max_total_instances, pool);
    if (!tuned) return Error{"validation of " + config.name + ": " + tuned.error().message};
    for (const double delay : rl::trained_delays(config)) {
      for (const rl::EvalWindow& window : rl::span_windows(config.rl->validation, "validation")) {
        s->plays_.push_back({s->recipes_.size(), window, delay});
      }
    }
    s->recipes_.push_back({&member, tuned->size, config.rl->slo_target});
  }
  if (s->plays_.empty()) return std::unique_ptr<CheckpointSelector>();
  if (const Status baseline = s->play_baseline(); !baseline) return baseline.error();
  if (resumed_after > 0) {
    if (const Status read = s->read_rows(resumed_after); !read) return read.error();
  }
  if (const Status written = s->write_csv(); !written) return written.error();
  return s;
}

namespace {

// The figures figures() writes, read from where `fields` stands.
// A row's figures, as a validation play can have left them: the attainment a share, the
// GPU-hours, instances and actions not negative, all finite (a resumed run picks its best
// checkpoint by them).
bool read_figures(std::istringstream& fields, rl::Outcome& o) {
  char comma = 0;
  fields >> o.slo_attainment >> comma >> o.gpu_hours >> comma >> o.mean_instances >> comma >> o.actions_per_hour >>
      comma >> o.reward;
  const auto finite_at_least_0 = [](double v) { return std::isfinite(v) && v >= 0; };
  return static_cast<bool>(fields) && o.slo_attainment >= 0 && o.slo_attainment <= 1 && finite_at_least_0(o.gpu_hours) &&
         finite_at_least_0(o.mean_instances) && finite_at_least_0(o.actions_per_hour) && std::isfinite(o.reward);
}

}  // namespace

// A resumed run keeps the rows of the checkpoints it has trained through, and chooses
// among them as an uninterrupted run would.
Status CheckpointSelector::read_rows(std::uint32_t resumed_after) {
  const fs::path csv = dir_ / "validation.csv", per_recipe = dir_ / "validation_recipes.csv";
  if (configs::path_kind(csv) == configs::PathKind::kMissing) {
    return Error{csv.string() + ": missing; a run resumed after iteration " + std::to_string(resumed_after) +
                 " picks best/ among the validation rows of the checkpoints it trained through"};
  }
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  if (line != kHeader) return Error{csv.string() + ": not a validation table of this meshsim (header differs)"};
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    Row row;
    char comma = 0;
    int best = 0;
    std::istringstream fields(line);
    fields >> row.iteration >> comma;
    const std::uint32_t previous = rows_.empty() ? 0 : rows_.back().iteration;
    if (!read_figures(fields, row.played.all) || !(fields >> comma >> best) || row.iteration <= previous) {
      return Error{csv.string() + ":" + std::to_string(number) + ": expected " + kHeader +
                   " (iterations rising, the attainment in [0, 1], the other figures finite and not negative)"};
    }
    if (row.iteration <= resumed_after) rows_.push_back(row);
  }
  // Every checkpoint saved on the way was validated: one at each multiple of
  // checkpoint_every (the one at resumed_after may be missing if the run stopped while
  // validating it: train plays it again).
  const std::uint32_t every = recipes_.front().member->config.rl->ppo.checkpoint_every;
  for (std::uint32_t k = every; every > 0 && k < resumed_after; k += every) {
    if (!validated(k)) {
      return Error{csv.string() + ": no row for iteration " + std::to_string(k) +
                   ", where a checkpoint (rl.ppo.checkpoint_every " + std::to_string(every) + ") was validated"};
    }
  }
  if (recipes_.size() == 1) {
    for (Row& row : rows_) row.played.recipes = {row.played.all};
  } else {
    std::ifstream recipes_in(per_recipe);
    std::getline(recipes_in, line);
    if (line != kRecipesHeader) {
      return Error{per_recipe.string() + ": missing, or not a validation table of this meshsim (header differs)"};
    }
    for (std::size_t number = 2; std::getline(recipes_in, line); ++number) {
      std::uint32_t iteration = 0;
      std::size_t recipe = 0;
      rl::Outcome o;
      char comma = 0;
      std::istringstream fields(line);
      fields >> iteration >> comma >> recipe >> comma;
      if (!read_figures(fields, o) || recipe >= recipes_.size()) {
        return Error{per_recipe.string() + ":" + std::to_string(number) + ": expected " + kRecipesHeader + " with " +
                     std::to_string(recipes_.size()) + " recipes"};
      }
      for (Row& row : rows_) {
        if (row.iteration == iteration && row.played.recipes.size() == recipe) row.played.recipes.push_back(o);
      }
    }
    for (const Row& row : rows_) {
      if (row.played.recipes.size() != recipes_.size()) {
        return Error{per_recipe.string() + ": expected a row per recipe for iteration " + std::to_string(row.iteration)};
      }
    }
  }
  best_ = pick();
  return Ok{};
}

bool CheckpointSelector::validated(std::uint32_t iteration) const {
  return std::any_of(rows_.begin(), rows_.end(), [iteration](const Row& row) { return row.iteration == iteration; });
}

int CheckpointSelector::pick() const {
  std::vector<std::vector<rl::Outcome>> candidates;
  for (const Row& row : rows_) candidates.push_back(row.played.recipes);
  std::vector<double> required;
  for (const Recipe& recipe : recipes_) required.push_back(recipe.required_slo);
  return rl::pick_per_recipe(candidates, required);
}

// The tuned static sizes held on the validation spans: the level a checkpoint must beat
// (the plot of the learning curve draws it). A residual policy's base, target tracking,
// plays them too: where it misses rl.slo_target on a recipe's spans, a checkpoint is held
// to the SLO it reaches there instead, so that the cheapest correction at target
// tracking's SLO is kept, as the test judges (else the highest attainment would win,
// however much it cost).
Status CheckpointSelector::play_baseline() {
  // A static size never scales, so the delay changes nothing but the pooling, which is
  // a checkpoint's: GPU-hours compare.
  baseline_ = play_spans([&](std::size_t i) {
    const Recipe& recipe = recipes_[plays_[i].recipe];
    return rl::Contender{"static", static_cast<double>(recipe.start), recipe.member->config, false, nullptr};
  });
  if (!baseline_.all.error.empty()) return Error{"validation of the tuned static size: " + baseline_.all.error};
  // The parameters of a run over several recipes: each recipe's, joined by '+'.
  std::string starts, targets;
  for (const Recipe& recipe : recipes_) {
    const char* plus = starts.empty() ? "" : "+";
    starts += plus + std::to_string(recipe.start);
    targets += plus + number_text(recipe.member->config.rl->residual_base.target);
  }
  AtomicFile csv((dir_ / "validation_baseline.csv").string());
  csv.stream() << kBaselineHeader << "\nstatic," << starts << ',' << figures(baseline_.all) << '\n';
  // The neutral choice everywhere: each recipe's own target tracking (when every recipe
  // has a residual base: the recipes of one run act alike, rl/env/vector_env.hpp).
  std::vector<rl::Actor> keep_base;
  for (const Recipe& recipe : recipes_) {
    const std::int64_t neutral = rl::ScalingEnv::neutral_choice(*recipe.member->config.rl);
    if (neutral < 0) break;
    keep_base.push_back([middle = static_cast<float>(neutral)](std::span<const float>, std::span<float> action) {
      std::fill(action.begin(), action.end(), middle);
    });
  }
  if (keep_base.size() == recipes_.size()) {
    base_ = play_spans([&](std::size_t i) {
      const configs::ScenarioConfig& config = recipes_[plays_[i].recipe].member->config;
      return rl::Contender{"residual_base", config.rl->residual_base.target, config, false,
                           &keep_base[plays_[i].recipe]};
    });
    if (!base_->all.error.empty()) return Error{"validation of rl.residual_base: " + base_->all.error};
    csv.stream() << "residual_base," << targets << ',' << figures(base_->all) << '\n';
    for (std::size_t r = 0; r < recipes_.size(); ++r) {
      recipes_[r].required_slo = std::min(recipes_[r].required_slo, base_->recipes[r].slo_attainment);
    }
  }
  return csv.commit();
}

CheckpointSelector::Played CheckpointSelector::play_spans(
    const std::function<rl::Contender(std::size_t)>& contender) const {
  std::vector<rl::Outcome> outcomes(plays_.size());
  engine::ThreadPool pool(0);
  pool.for_each(plays_.size(), [&](std::size_t i) {
    const Play& p = plays_[i];
    const Recipe& recipe = recipes_[p.recipe];
    outcomes[i] = rl::play(contender(i), catalog_, recipe.member->workload, p.window, p.delay_s, recipe.start,
                           recipe.member->config.seed);
  });
  Played played;
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    std::vector<rl::Outcome> mine;
    for (std::size_t i = 0; i < plays_.size(); ++i) {
      if (plays_[i].recipe == r) mine.push_back(outcomes[i]);
    }
    played.recipes.push_back(rl::pooled(mine));
  }
  played.all = rl::pooled(outcomes);
  return played;
}

std::string CheckpointSelector::baseline_summary() const {
  std::string text = "validation baseline: the tuned static size";
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    text += (r == 0 ? " " : "+") + std::to_string(recipes_[r].start);
  }
  char line[200];
  std::snprintf(line, sizeof line, " holds SLO %s, %.2f GPU-h", percent_text(baseline_.all.slo_attainment).c_str(),
                baseline_.all.gpu_hours);
  text += line;
  if (base_) {
    std::snprintf(line, sizeof line, "; rl.residual_base's target tracking %s, %.2f GPU-h",
                  percent_text(base_->all.slo_attainment).c_str(), base_->all.gpu_hours);
    text += line;
  }
  text += "; checkpoints are held to SLO ";
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    text += (r == 0 ? "" : ", ") + percent_text(recipes_[r].required_slo);
    if (recipes_.size() > 1) text += " on " + recipes_[r].member->config.name;
  }
  return text;
}

Expected<std::string> CheckpointSelector::consider(const fs::path& checkpoint, std::uint32_t iteration) {
  // A runner per play: plays run in parallel, and a runner keeps buffers.
  std::vector<std::unique_ptr<rl::PolicyRunner>> runners;
  std::vector<rl::Actor> actors;
  for (std::size_t i = 0; i < plays_.size(); ++i) {
    auto runner = rl::PolicyRunner::load(checkpoint);
    if (!runner) return runner.error();
    runners.push_back(std::move(*runner));
  }
  for (auto& runner : runners) {
    rl::PolicyRunner* r = runner.get();
    actors.push_back([r](std::span<const float> obs, std::span<float> action) { r->act(obs, action); });
  }
  Row row{iteration, play_spans([&](std::size_t i) {
            return rl::Contender{"ppo", rl::kNoParameter, recipes_[plays_[i].recipe].member->config, false,
                                 &actors[i]};
          })};
  if (!row.played.all.error.empty()) {
    return Error{"validation of " + checkpoint.string() + ": " + row.played.all.error};
  }
  rows_.push_back(row);
  const bool best = pick() == static_cast<int>(rows_.size() - 1);
  if (best) {
    best_ = static_cast<int>(rows_.size() - 1);
    // Copied beside, then swapped in: an interruption leaves the previous best whole.
    if (const Status kept = rl::copy_checkpoint(checkpoint, dir_ / "best"); !kept) {
      return Error{"cannot keep the best checkpoint: " + kept.error().message};
    }
  }
  if (const Status written = write_csv(); !written) return written.error();
  const rl::Outcome& o = row.played.all;
  char line[200];
  std::snprintf(line, sizeof line, "validation after iteration %" PRIu32 ": SLO %s, %.2f GPU-h, %.2f instances%s",
                iteration, percent_text(o.slo_attainment).c_str(), o.gpu_hours, o.mean_instances,
                best ? " (best so far: kept as best/)" : "");
  return std::string(line);
}

Status CheckpointSelector::write_csv() const {
  AtomicFile csv((dir_ / "validation.csv").string());
  csv.stream() << kHeader << '\n';
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const int best = static_cast<int>(i) == best_ ? 1 : 0;
    csv.stream() << rows_[i].iteration << ',' << figures(rows_[i].played.all) << ',' << best << '\n';
  }
  if (const Status written = csv.commit(); !written || recipes_.size() == 1) return written;
  AtomicFile per_recipe((dir_ / "validation_recipes.csv").string());
  per_recipe.stream() << kRecipesHeader << '\n';
  for (const Row& row : rows_) {
    for (std::size_t r = 0; r < recipes_.size(); ++r) {
      per_recipe.stream() << row.iteration << ',' << r << ',' << figures(row.played.recipes[r]) << '\n';
    }
  }
  return per_recipe.commit();
}

}  // namespace meshsim::cli
