#include "tools/cli/capacity_model_command.hpp"

#include <nlohmann/json.hpp>
#include <ostream>

#include "configs/capacity_model_file.hpp"
#include "rl/env/capacity_labels.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/engine/thread_pool.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/folder_lock.hpp"

namespace meshsim::cli {

namespace {

using autoscale::CapacityFeatures;

// Every label's row: where it is, its work, and each size's measured capacity.
void write_labels(std::ostream& csv, const std::vector<rl::CapacityLabel>& labels, const std::string& split) {
  for (const rl::CapacityLabel& label : labels) {
    const auto& c = label.capacity;
    for (std::size_t j = 0; j < c.curve.sizes.size(); ++j) {
      csv << split << ',' << number_text(label.start_s) << ',' << number_text(label.length_s) << ',' << c.requests
          << ',' << number_text(label.work.prompt_mean) << ',' << number_text(label.work.prompt_p90) << ','
          << number_text(label.work.output_mean) << ',' << number_text(label.work.output_p90) << ','
          << number_text(label.work.burstiness) << ',' << c.curve.sizes[j] << ',' << number_text(c.curve.sustained[j])
          << ',' << (c.below_target[j] ? 1 : 0) << '\n';
    }
  }
}

}  // namespace

int run_capacity_model_command(const CapacityModelCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto chosen = autoscale::kCapacityFeatureNames.parse(options.features);
  if (!chosen) {
    return fail(err, "--features: expected one of " + autoscale::kCapacityFeatureNames.accepted() + ", got '" +
                         options.features + "'",
                kExitBadInput);
  }
  if (options.stretches == 0 || options.validation_stretches == 0) {
    return fail(err, "--stretches and --validation-stretches: expected at least 1", kExitBadInput);
  }
  if (!(options.stretch_s >= 60 && options.stretch_s <= 86'400)) {
    return fail(err, "--stretch: expected seconds in [60, 86400], got " + number_text(options.stretch_s), kExitBadInput);
  }
  auto config = load_scenario_for_command(
      options.config_path, {.seed = options.seed, .sets = options.sets, .catalog = options.catalog});
  if (!config) return fail(err, config.error().message, kExitBadInput);
  if (!config->rl || config->rl->validation.empty()) {
    return fail(err, options.config_path + ": expected a recipe with rl.validation spans (the days a model is judged on)",
                kExitBadInput);
  }
  auto catalog = configs::load_scenario_catalog(*config);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto workload = traces::open_episode_workload(config->workload, config->seed);
  if (!workload) return fail(err, workload.error().message, kExitBadInput);
  auto lock = FolderLock::acquire(options.out_dir, "meshsim capacity-model");
  if (!lock) return fail(err, lock.error().message, kExitOutputError);

  engine::ThreadPool pool(0);
  const configs::RlSpec& spec = *config->rl;
  const auto train_starts = rl::pick_stretches({spec.training_span()}, options.stretch_s, options.stretches, config->seed);
  const auto validation_starts =
      rl::pick_stretches(spec.validation, options.stretch_s, options.validation_stretches, config->seed + 1);
  auto train = rl::label_stretches(*config, *catalog, *workload, train_starts, options.stretch_s, pool);
  if (!train) return fail(err, options.config_path + ": " + train.error().message, kExitBadInput);
  auto validation = rl::label_stretches(*config, *catalog, *workload, validation_starts, options.stretch_s, pool);
  if (!validation) return fail(err, options.config_path + ": " + validation.error().message, kExitBadInput);
  const auto train_samples = rl::capacity_samples(*train, options.least_requests);
  const auto validation_samples = rl::capacity_samples(*validation, options.least_requests);
  if (validation_samples.empty()) {
    // An error over no sample would read 0% and accept any model.
    return fail(err, options.config_path + ": no validation stretch has " + std::to_string(options.least_requests) +
                         " requests (--least-requests): nothing to judge a model on",
                kExitBadInput);
  }

  out << "meshsim capacity-model: " << options.config_path << ", " << train->size() << " training and "
      << validation->size() << " validation stretches of " << number_text(options.stretch_s) << " s ("
      << train_samples.size() << " and " << validation_samples.size() << " samples at the "
      << percent_text(spec.slo_target) << " SLO target)\n";
  out << "  features      training  validation  validation at 1 / 2 / 4 / 8 instances  (mean absolute percentage "
         "error of the capacity)\n";
  autoscale::CapacityModel written;
  double written_error = 0;
  for (const auto& [rung, name] : autoscale::kCapacityFeatureNames.entries()) {
    const autoscale::CapacityModel model = autoscale::fit_capacity_model(train_samples, rung);
    const double fit_error = autoscale::mean_abs_percentage_error(model, train_samples);
    const double error = autoscale::mean_abs_percentage_error(model, validation_samples);
    out << "  " << name << std::string(14 - std::min<std::size_t>(13, name.size()), ' ') << percent_text(fit_error, 1)
        << std::string(6, ' ') << percent_text(error, 1) << std::string(6, ' ');
    for (const std::uint32_t n : rl::kCapacitySizes) {
      std::vector<autoscale::CapacitySample> at_n;
      for (const auto& sample : validation_samples) {
        if (sample.n == n) at_n.push_back(sample);
      }
      out << (n == 1 ? "" : " / ")
          << (at_n.empty() ? "-" : percent_text(autoscale::mean_abs_percentage_error(model, at_n), 1));
    }
    out << (rung == *chosen ? "  (written)" : "") << '\n';
    if (rung == *chosen) {
      written = model;
      written_error = error;
    }
  }
  if (written.sizes.empty()) {
    return fail(err, options.config_path + ": too few training samples to fit '" + options.features + "'",
                kExitBadInput);
  }
  const bool accepted = written_error <= options.accept_error;
  out << "  " << options.features << (accepted ? " accepted" : " NOT accepted") << ": "
      << percent_text(written_error, 1) << " on the validation stretches (at most " << percent_text(options.accept_error, 0)
      << ")\n";

  AtomicFile labels(options.out_dir + "/capacity_labels.csv");
  labels.stream() << "split,start_s,length_s,requests,prompt_mean,prompt_p90,output_mean,output_p90,burstiness,"
                     "instances,sustained_per_s,below_target\n";
  write_labels(labels.stream(), *train, "training");
  write_labels(labels.stream(), *validation, "validation");
  AtomicFile model(options.out_dir + "/capacity_model.json");
  model.stream() << configs::capacity_model_json(written, {options.config_path, spec.slo_target, written_error}).dump(2) << '\n';
  for (AtomicFile* file : {&labels, &model}) {
    if (auto status = file->commit(); !status) return fail(err, status.error().message, kExitOutputError);
  }
  out << "outputs       " << labels.path() << ", " << model.path() << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
