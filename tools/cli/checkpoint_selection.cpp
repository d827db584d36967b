#include "tools/cli/checkpoint_selection.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "rl/env/scaling_env.hpp"
#include "rl/ppo/checkpoint_folder.hpp"
#include "rl/ppo/policy_runner.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/cli/atomic_file.hpp"

namespace meshsim::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHeader = "iteration,slo_attainment,gpu_hours,mean_instances,actions_per_hour,reward,best";
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
        s->plays_.push_back({&member, window, delay, tuned->size});
      }
    }
    const char* plus = s->starts_.empty() ? "" : "+";
    s->starts_ += plus + std::to_string(tuned->size);
    s->base_targets_ += plus + number_text(config.rl->residual_base.target);
  }
  if (s->plays_.empty()) return std::unique_ptr<CheckpointSelector>();
  if (const Status baseline = s->play_baseline(); !baseline) return baseline.error();

  // A resumed run keeps the rows of the checkpoints it has trained through.
  const fs::path csv = s->dir_ / "validation.csv";
  if (resumed_after > 0 && fs::exists(csv)) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    if (line != kHeader) return Error{csv.string() + ": not a validation table of this meshsim (header differs)"};
    for (std::size_t number = 2; std::getline(in, line); ++number) {
      Row row;
      char comma = 0;
      int best = 0;
      std::istringstream fields(line);
      rl::Outcome& o = row.outcome;
      fields >> row.iteration >> comma >> o.slo_attainment >> comma >> o.gpu_hours >> comma >> o.mean_instances >>
          comma >> o.actions_per_hour >> comma >> o.reward >> comma >> best;
      if (!fields) return Error{csv.string() + ":" + std::to_string(number) + ": expected " + kHeader};
      if (row.iteration <= resumed_after) s->rows_.push_back(row);
    }
    std::vector<rl::Outcome> kept;
    for (const Row& row : s->rows_) kept.push_back(row.outcome);
    s->best_ = rl::pick(kept, s->required_slo_);
  }
  if (const Status written = s->write_csv(); !written) return written.error();
  return s;
}

// The tuned static sizes held on the validation spans: the level a checkpoint must beat
// (the plot of the learning curve draws it). A residual policy's base, target tracking,
// plays them too: where it misses rl.slo_target there, a checkpoint is held to the SLO
// it reaches instead, so that the cheapest correction at target tracking's SLO is kept,
// as the test judges (else the highest attainment would win, however much it cost).
Status CheckpointSelector::play_baseline() {
  // A static size never scales, so the delay changes nothing but the pooling, which is
  // a checkpoint's: GPU-hours compare.
  baseline_ = play_spans([&](std::size_t i) {
    return rl::Contender{"static", static_cast<double>(plays_[i].start), plays_[i].member->config, false, nullptr};
  });
  if (!baseline_.error.empty()) return Error{"validation of the tuned static size: " + baseline_.error};
  AtomicFile csv((dir_ / "validation_baseline.csv").string());
  csv.stream() << kBaselineHeader << "\nstatic," << starts_ << ',' << figures(baseline_) << '\n';
  required_slo_ = plays_.front().member->config.rl->slo_target;
  // The neutral choice everywhere: each recipe's own target tracking (when every recipe
  // has a residual base: the recipes of one run act alike, rl/env/vector_env.hpp).
  std::vector<rl::Actor> keep_base;
  for (const Play& play : plays_) {
    const std::int64_t neutral = rl::ScalingEnv::neutral_choice(*play.member->config.rl);
    if (neutral < 0) break;
    keep_base.push_back([middle = static_cast<float>(neutral)](std::span<const float>, std::span<float> action) {
      std::fill(action.begin(), action.end(), middle);
    });
  }
  if (keep_base.size() == plays_.size()) {
    base_ = play_spans([&](std::size_t i) {
      const configs::ScenarioConfig& config = plays_[i].member->config;
      return rl::Contender{"residual_base", config.rl->residual_base.target, config, false, &keep_base[i]};
    });
    if (!base_->error.empty()) return Error{"validation of rl.residual_base: " + base_->error};
    csv.stream() << "residual_base," << base_targets_ << ',' << figures(*base_) << '\n';
    required_slo_ = std::min(required_slo_, base_->slo_attainment);
  }
  return csv.commit();
}

rl::Outcome CheckpointSelector::play_spans(const std::function<rl::Contender(std::size_t)>& contender) const {
  std::vector<rl::Outcome> outcomes(plays_.size());
  engine::ThreadPool pool(0);
  pool.for_each(plays_.size(), [&](std::size_t i) {
    const Play& p = plays_[i];
    outcomes[i] = rl::play(contender(i), catalog_, p.member->workload, p.window, p.delay_s, p.start,
                           p.member->config.seed);
  });
  return rl::pooled(outcomes);
}

std::string CheckpointSelector::baseline_summary() const {
  char line[200];
  std::snprintf(line, sizeof line, "validation baseline: the tuned static size %s holds SLO %s, %.2f GPU-h",
                starts_.c_str(), percent_text(baseline_.slo_attainment).c_str(), baseline_.gpu_hours);
  std::string text = line;
  if (base_) {
    std::snprintf(line, sizeof line, "; rl.residual_base's target tracking %s, %.2f GPU-h; checkpoints are held to SLO %s",
                  percent_text(base_->slo_attainment).c_str(), base_->gpu_hours, percent_text(required_slo_).c_str());
    text += line;
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
            return rl::Contender{"ppo", rl::kNoParameter, plays_[i].member->config, false, &actors[i]};
          })};
  if (!row.outcome.error.empty()) return Error{"validation of " + checkpoint.string() + ": " + row.outcome.error};
  rows_.push_back(row);
  std::vector<rl::Outcome> all;
  for (const Row& r : rows_) all.push_back(r.outcome);
  const bool best = rl::pick(all, required_slo_) == static_cast<int>(rows_.size() - 1);
  if (best) {
    best_ = static_cast<int>(rows_.size() - 1);
    // Copied beside, then swapped in: an interruption leaves the previous best whole.
    if (const Status kept = rl::copy_checkpoint(checkpoint, dir_ / "best"); !kept) {
      return Error{"cannot keep the best checkpoint: " + kept.error().message};
    }
  }
  if (const Status written = write_csv(); !written) return written.error();
  char line[200];
  std::snprintf(line, sizeof line, "validation after iteration %" PRIu32 ": SLO %s, %.2f GPU-h, %.2f instances%s",
                iteration, percent_text(row.outcome.slo_attainment).c_str(), row.outcome.gpu_hours,
                row.outcome.mean_instances, best ? " (best so far: kept as best/)" : "");
  return std::string(line);
}

Status CheckpointSelector::write_csv() const {
  AtomicFile csv((dir_ / "validation.csv").string());
  csv.stream() << kHeader << '\n';
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const int best = static_cast<int>(i) == best_ ? 1 : 0;
    csv.stream() << rows_[i].iteration << ',' << figures(rows_[i].outcome) << ',' << best << '\n';
  }
  return csv.commit();
}

}  // namespace meshsim::cli
