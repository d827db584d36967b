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

CheckpointSelector::CheckpointSelector(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                       traces::SharedWorkload workload, fs::path dir)
    : config_(config), catalog_(catalog), workload_(std::move(workload)), dir_(std::move(dir)) {}

Expected<std::unique_ptr<CheckpointSelector>> CheckpointSelector::create(const configs::ScenarioConfig& config,
                                                                         const configs::Catalog& catalog,
                                                                         traces::SharedWorkload workload, fs::path dir,
                                                                         std::uint32_t resumed_after) {
  const configs::RlSpec& spec = *config.rl;
  if (spec.validation.empty()) return std::unique_ptr<CheckpointSelector>();
  std::unique_ptr<CheckpointSelector> s(new CheckpointSelector(config, catalog, workload, std::move(dir)));
  s->windows_ = rl::span_windows(spec.validation, "validation");
  s->delays_ = rl::trained_delays(config);
  // Where every adaptive policy starts: the static size tuned on the training windows.
  engine::ThreadPool pool(0);
  const auto tuned = rl::tune_static_size(config, catalog, workload, config.scaling.manager.max_total_instances, pool);
  if (!tuned) return Error{"validation: " + tuned.error().message};
  s->start_ = tuned->size;
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

// The tuned static size held on the validation spans: the level a checkpoint must beat
// (the plot of the learning curve draws it). A residual policy's base, target tracking,
// plays them too: where it misses rl.slo_target there, a checkpoint is held to the SLO
// it reaches instead, so that the cheapest correction at target tracking's SLO is kept,
// as the test judges (else the highest attainment would win, however much it cost).
Status CheckpointSelector::play_baseline() {
  // A static size never scales, so the delay changes nothing but the pooling, which is
  // a checkpoint's: GPU-hours compare.
  baseline_ = play_spans([&](std::size_t) {
    return rl::Contender{"static", static_cast<double>(start_), config_, false, nullptr};
  });
  if (!baseline_.error.empty()) return Error{"validation of the tuned static size: " + baseline_.error};
  AtomicFile csv((dir_ / "validation_baseline.csv").string());
  csv.stream() << kBaselineHeader << "\nstatic," << start_ << ',' << figures(baseline_) << '\n';
  required_slo_ = config_.rl->slo_target;
  if (const std::int64_t neutral = rl::ScalingEnv::neutral_choice(*config_.rl); neutral >= 0) {
    // The neutral choice everywhere: the scenario's own target tracking.
    const rl::Actor keep_base = [middle = static_cast<float>(neutral)](std::span<const float>, std::span<float> action) {
      std::fill(action.begin(), action.end(), middle);
    };
    base_ = play_spans([&](std::size_t) {
      return rl::Contender{"residual_base", config_.rl->residual_base.target, config_, false, &keep_base};
    });
    if (!base_->error.empty()) return Error{"validation of rl.residual_base: " + base_->error};
    csv.stream() << "residual_base," << number_text(config_.rl->residual_base.target) << ',' << figures(*base_)
                 << '\n';
    required_slo_ = std::min(required_slo_, base_->slo_attainment);
  }
  return csv.commit();
}

rl::Outcome CheckpointSelector::play_spans(const std::function<rl::Contender(std::size_t)>& contender) const {
  std::vector<rl::Outcome> plays(windows_.size() * delays_.size());
  engine::ThreadPool pool(0);
  pool.for_each(plays.size(), [&](std::size_t i) {
    plays[i] = rl::play(contender(i), catalog_, workload_, windows_[i % windows_.size()], delays_[i / windows_.size()],
                        start_, config_.seed);
  });
  return rl::pooled(plays);
}

std::string CheckpointSelector::baseline_summary() const {
  char line[200];
  std::snprintf(line, sizeof line, "validation baseline: the tuned static size %" PRIu32 " holds SLO %s, %.2f GPU-h",
                start_, percent_text(baseline_.slo_attainment).c_str(), baseline_.gpu_hours);
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
  for (std::size_t i = 0; i < windows_.size() * delays_.size(); ++i) {
    auto runner = rl::PolicyRunner::load(checkpoint);
    if (!runner) return runner.error();
    runners.push_back(std::move(*runner));
  }
  for (auto& runner : runners) {
    rl::PolicyRunner* r = runner.get();
    actors.push_back([r](std::span<const float> obs, std::span<float> action) { r->act(obs, action); });
  }
  Row row{iteration, play_spans([&](std::size_t i) {
            return rl::Contender{"ppo", rl::kNoParameter, config_, false, &actors[i]};
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
