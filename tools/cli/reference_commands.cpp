#include "tools/cli/reference_commands.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <vector>

#include "configs/catalog.hpp"
#include "sim/engine/number_text.hpp"
#include "configs/serving_reference.hpp"
#include "sim/perf/step_calibration.hpp"
#include "tools/cli/closed_loop_commands.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/error_stats.hpp"
#include "tools/runs/figure_text.hpp"
#include "tools/runs/replay_to_end.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::ordered_json;

struct ResolvedRow {
  const configs::ServingReferenceRow* row;
  cluster::SteadyLoad load;
};

// Looks each row's model and GPU up in the catalog; an error names the file's line.
Expected<std::vector<ResolvedRow>> resolve(const std::vector<configs::ServingReferenceRow>& rows,
                                           const configs::Catalog& catalog, const std::string& path) {
  std::vector<ResolvedRow> out;
  for (const auto& row : rows) {
    const auto* model = catalog.find_model(row.model);
    const auto* sku = catalog.find_sku(row.gpu);
    const std::string where = path + ":" + std::to_string(row.line) + ": ";
    if (model == nullptr) {
      return Error{where + "model: no model '" + row.model +
                   "' in the catalog (models.json by name or hf_id, or hf/<org>/<name>/config.json under --catalog)"};
    }
    if (sku == nullptr) return Error{where + "gpu: no SKU or alias '" + row.gpu + "' in hardware.json"};
    cluster::SteadyLoad load;
    load.model = *model;
    load.sku = *sku;
    load.tensor_parallel = row.tensor_parallel;
    load.rate_per_s = row.rate_per_s;
    load.prompt_tokens = row.prompt_len_mean > 0 ? row.prompt_len_mean : row.system_prompt_len + row.question_len;
    // The system prompt's full KV blocks come from the prefix cache.
    load.cached_tokens = static_cast<double>(row.system_prompt_tokens() / configs::kVllmBlockSize *
                                             configs::kVllmBlockSize);
    load.output_tokens = row.output_len;
    load.e2e_mean_s = row.e2e_mean_s;
    load.ttft_mean_s = row.ttft_mean_s;
    out.push_back({&row, load});
  }
  return out;
}

double relative_error(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0.0;
}

// The latencies of one replayed row's completed requests.
class LatencyCollector final : public replay::ReplayObserver {
 public:
  void on_request(const metrics::RequestRecord& r) override {
    if (r.status != metrics::RequestStatus::kCompleted) {
      ++not_completed_;
      return;
    }
    e2e_.push_back(r.e2e()->seconds());
    ttft_.push_back(r.ttft()->seconds());
    if (auto tbt = r.tbt_mean(metrics::TbtDefinition::kMeanGap); tbt && r.output_tokens > 1) {
      itl_.push_back(tbt->seconds());
    }
    output_tokens_ += r.output_tokens;
  }

  // A latency over no completed request is null, never 0.
  ordered_json figures(double duration_s) {
    std::sort(e2e_.begin(), e2e_.end());
    std::sort(ttft_.begin(), ttft_.end());
    const auto mean = [](const std::vector<double>& v) {
      double sum = 0;
      for (const double x : v) sum += x;
      return v.empty() ? ordered_json(nullptr) : ordered_json(sum / static_cast<double>(v.size()));
    };
    const auto at = [](const std::vector<double>& sorted, double p) {
      return sorted.empty() ? ordered_json(nullptr) : ordered_json(percentile(sorted, p));
    };
    ordered_json out;
    out["requests"] = e2e_.size();
    out["failures"] = not_completed_;
    out["e2e_mean_s"] = mean(e2e_);
    out["e2e_p50_s"] = at(e2e_, 50);
    out["e2e_p90_s"] = at(e2e_, 90);
    out["e2e_p99_s"] = at(e2e_, 99);
    out["ttft_mean_s"] = mean(ttft_);
    out["ttft_p50_s"] = at(ttft_, 50);
    out["ttft_p90_s"] = at(ttft_, 90);
    out["ttft_p99_s"] = at(ttft_, 99);
    out["inter_token_mean_s"] = mean(itl_);
    out["output_tokens_per_s"] = static_cast<double>(output_tokens_) / duration_s;
    out["requests_per_s"] = static_cast<double>(e2e_.size()) / duration_s;
    return out;
  }

 private:
  std::vector<double> e2e_, ttft_, itl_;
  std::uint64_t not_completed_ = 0;
  std::uint64_t output_tokens_ = 0;
};

// A load to fit and the line it came from, for the per-row report.
struct FitRow {
  std::string where;  // file:line
  std::string model;
  std::uint32_t tensor_parallel;
  cluster::SteadyLoad load;
};

}  // namespace

int run_calibrate_reference(const CalibrateReferenceOptions& options, std::ostream& out, std::ostream& err) {
  const auto& references = options.references;
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), options.catalog, false);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto fit_on = parse_shapes("--fit-on", options.fit_on);
  if (!fit_on) return fail(err, fit_on.error().message, kExitBadInput);
  std::set<std::string> skus;  // by the catalog's names
  for (const std::string& name : options.skus) {
    const auto* sku = catalog->find_sku(name);
    if (sku == nullptr) return fail(err, "--sku: no SKU or alias '" + name + "' in hardware.json", kExitBadInput);
    skus.insert(sku->name);
  }
  std::map<std::string, std::vector<FitRow>> by_sku;
  std::string left_out;  // what the report says of the rows left out
  for (const std::string& reference : references) {
    const std::string name = std::filesystem::path(reference).filename().string();
    if (configs::is_closed_loop_table(reference)) {
      auto fit = closed_loop_fit_loads(reference, *catalog, *fit_on);
      if (!fit) return fail(err, fit.error().message, kExitBadInput);
      for (std::size_t i = 0; i < fit->loads.size(); ++i) {
        const auto& load = fit->loads[i];
        by_sku[load.sku.name].push_back(
            {reference + ":" + std::to_string(fit->lines[i]), load.model.name, load.tensor_parallel, load});
      }
      left_out += name + ": " + std::to_string(fit->held_out) + " rows of other shapes held out, " +
                  std::to_string(fit->waiting_for_kv) + " whose clients wait for KV, " + std::to_string(fit->refused) +
                  " that cannot be modelled\n";
      continue;
    }
    auto rows = configs::read_serving_reference(reference);
    if (!rows) return fail(err, rows.error().message, kExitBadInput);
    auto resolved = resolve(*rows, *catalog, reference);
    if (!resolved) return fail(err, resolved.error().message, kExitBadInput);
    std::size_t file_skipped = 0;
    for (const auto& r : *resolved) {
      if (r.row->kept_up() && r.row->e2e_mean_s > r.row->ttft_mean_s && r.row->ttft_mean_s > 0) {
        by_sku[r.load.sku.name].push_back(
            {reference + ":" + std::to_string(r.row->line), r.row->model, r.row->tensor_parallel, r.load});
      } else {
        ++file_skipped;
      }
    }
    left_out += name + ": " + std::to_string(file_skipped) +
                " rows the server did not keep up with (failures, or fewer requests served than sent)\n";
  }
  std::size_t other_skus = 0;
  for (auto it = by_sku.begin(); it != by_sku.end();) {
    if (skus.empty() || skus.count(it->first)) {
      ++it;
      continue;
    }
    other_skus += it->second.size();
    it = by_sku.erase(it);
  }
  if (other_skus > 0) left_out += std::to_string(other_skus) + " rows of SKUs not named by --sku\n";
  if (by_sku.empty()) return fail(err, "no row to fit: none was measured in a steady state", kExitBadInput);
  std::map<std::string, cluster::StepCoefficients> fits;
  char line[320];
  err << "row                                    model                          TP   step ms meas/fit      "
         "TTFT ms meas/fit\n";
  for (const auto& [sku, group] : by_sku) {
    std::vector<cluster::SteadyLoad> loads;
    for (const auto& r : group) loads.push_back(r.load);
    fits[sku] = cluster::fit_step_coefficients(loads);
    for (const auto& r : group) {
      const auto eq = cluster::load_equations(r.load);
      const auto p = cluster::predict(fits[sku], r.load);
      const std::string where = r.where.size() > 38 ? r.where.substr(r.where.size() - 38) : r.where;
      std::snprintf(line, sizeof line, "%-38s %-30.30s %2u  %6.2f %6.2f %+4.0f%%  ", where.c_str(), r.model.c_str(),
                    r.tensor_parallel, eq.step_s * 1e3, p.step_s * 1e3, 100 * relative_error(p.step_s, eq.step_s));
      err << line;
      if (r.load.fit_first_token) {
        std::snprintf(line, sizeof line, "%7.1f %6.1f %+4.0f%%\n", r.load.ttft_mean_s * 1e3, p.ttft_s * 1e3,
                      100 * relative_error(p.ttft_s, r.load.ttft_mean_s));
        err << line;
      } else {
        err << std::setw(7) << std::fixed << std::setprecision(1) << r.load.ttft_mean_s * 1e3
            << "  (a closed loop's: judged by validate's replay)\n";
      }
    }
  }
  err << "left out: " << left_out;
  std::string sources;
  for (const std::string& reference : references) {
    sources += " --reference " + std::filesystem::path(reference).filename().string();
  }
  if (!fit_on->empty()) sources += " --fit-on " + options.fit_on;
  for (const std::string& sku : options.skus) sources += " --sku " + sku;
  const std::string comment = "Step-time coefficients fitted by `meshsim calibrate" + sources +
                              "` (bounded least squares on the rows measured in a steady state). Regenerate rather "
                              "than edit.";
  out << configs::step_fits_to_json(fits, comment, "meshsim calibrate" + sources).dump(2) << '\n';
  return kExitOk;
}

int run_validate_command(const ValidateCommandOptions& options, std::ostream& out, std::ostream& err) {
  // NaN compares false with everything: it would have meant "no timeout" silently.
  if (!(options.client_timeout_s >= 0 && options.client_timeout_s <= engine::SimTime::kMaxSeconds)) {
    return fail(err, "--client-timeout: expected seconds in [0, 1e12] (0: none), got " +
                         number_text(options.client_timeout_s), kExitBadInput);
  }
  if (configs::is_closed_loop_table(options.reference)) return run_validate_closed_loop(options, out, err);
  for (const auto& [given, option] : {std::pair{!options.fit_on.empty(), "--fit-on"},
                                      std::pair{options.requests_per_client.has_value(), "--requests-per-client"}}) {
    if (given) {
      return fail(err, std::string(option) + ": applies to closed-loop tables (AIConfigurator's layout); " +
                           options.reference + " is a serving reference, whose rows arrive at a rate",
                  kExitBadInput);
    }
  }
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), options.catalog);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto rows = configs::read_serving_reference(options.reference);
  if (!rows) return fail(err, rows.error().message, kExitBadInput);
  if (auto resolved = resolve(*rows, *catalog, options.reference); !resolved) {
    return fail(err, resolved.error().message, kExitBadInput);
  }
  ordered_json report = {{"rows", ordered_json::array()}};
  std::vector<double> e2e_errors, ttft_errors, itl_errors;
  char line[320];
  if (!options.json) {
    out << "line  experiment                                  rate  E2E P50 s meas/pred        TTFT P50 s meas/pred"
           "       ITL mean ms meas/pred\n";
  }
  for (const auto& row : *rows) {
    const configs::ScenarioConfig config = configs::reference_scenario(
        row, options.seed,
        options.client_timeout_s > 0 ? std::optional(engine::SimTime::from_seconds(options.client_timeout_s)) : std::nullopt);
    LatencyCollector collector;
    auto finished = replay_to_end(config, options.reference + ":" + std::to_string(row.line), *catalog, collector);
    if (!finished) return fail(err, finished.error().message, kExitBadInput);
    ordered_json predicted = collector.figures(row.duration_s);
    const auto figure = [&](const char* key) {
      return predicted[key].is_null() ? std::optional<double>() : std::optional<double>(predicted[key].get<double>());
    };
    const auto e2e = figure("e2e_p50_s"), ttft = figure("ttft_p50_s"), itl = figure("inter_token_mean_s");
    const bool kept_up = row.kept_up();
    // No prediction (nothing completed in the replay) has no error either.
    const auto error_of = [](const std::optional<double>& predicted_s, double measured_s) {
      return predicted_s ? measured_error(*predicted_s, measured_s) : std::nullopt;
    };
    const auto e2e_error = error_of(e2e, row.e2e_p50_s);
    const auto ttft_error = error_of(ttft, row.ttft_p50_s);
    const auto itl_error = error_of(itl, row.inter_token_mean_s());
    if (kept_up) {
      if (e2e_error) e2e_errors.push_back(std::fabs(*e2e_error));
      if (ttft_error) ttft_errors.push_back(std::fabs(*ttft_error));
      if (itl_error) itl_errors.push_back(std::fabs(*itl_error));
    }
    const auto as_json = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
    ordered_json entry = {{"line", row.line}, {"experiment", row.experiment}, {"kept_up", kept_up}};
    entry.update(predicted);
    entry["errors"] = {{"e2e_p50", as_json(e2e_error)},
                       {"ttft_p50", as_json(ttft_error)},
                       {"inter_token_mean", as_json(itl_error)}};
    report["rows"].push_back(entry);
    if (!options.json) {
      std::snprintf(line, sizeof line, "%4zu  %-40.40s %5.1f  %7.3f %s %s  %7.3f %s %s  %6.2f %s %s%s%s\n",
                    row.line, row.experiment.c_str(), row.rate_per_s, row.e2e_p50_s, fixed_or(e2e, 3, "-", 7).c_str(),
                    percent_or_dash(e2e_error, 7).c_str(), row.ttft_p50_s, fixed_or(ttft, 3, "-", 7).c_str(),
                    percent_or_dash(ttft_error, 7).c_str(), row.inter_token_mean_s() * 1e3,
                    fixed_or(itl ? std::optional(*itl * 1e3) : std::nullopt, 2, "-", 6).c_str(),
                    percent_or_dash(itl_error, 7).c_str(), kept_up ? "" : "  (overloaded)",
                    e2e ? "" : "  (no request completed in the replay)");
      out << line << std::flush;
    }
  }
  // Each figure's median over the rows that measured it (null, and "-", over none).
  const auto median_of = [](const std::vector<double>& errors) {
    return errors.empty() ? std::optional<double>() : std::optional<double>(median(errors));
  };
  const auto as_json = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  report["median_abs_error"] = {{"e2e_p50", as_json(median_of(e2e_errors))},
                                {"ttft_p50", as_json(median_of(ttft_errors))},
                                {"inter_token_mean", as_json(median_of(itl_errors))},
                                {"rows", e2e_errors.size()},
                                {"rows_by_figure",
                                 {{"e2e_p50", e2e_errors.size()},
                                  {"ttft_p50", ttft_errors.size()},
                                  {"inter_token_mean", itl_errors.size()}}}};
  if (options.json) {
    out << report.dump(2) << '\n';
  } else if (e2e_errors.empty() && ttft_errors.empty() && itl_errors.empty()) {
    out << "no row has both a measurement the server kept up with and a prediction: no error to report\n";
  } else {
    const auto figure = [&](const char* name, const std::vector<double>& errors) {
      return std::string(name) + " " +
             (errors.empty() ? std::string("- (no row measured it)")
                             : number_text(std::round(1000 * median(errors)) / 10) + "% over " +
                                   std::to_string(errors.size()) + " rows");
    };
    out << "median |error| where the server kept up: " << figure("E2E P50", e2e_errors) << ", "
        << figure("TTFT P50", ttft_errors) << ", " << figure("ITL mean", itl_errors) << '\n';
  }
  return kExitOk;
}

}  // namespace meshsim::cli
