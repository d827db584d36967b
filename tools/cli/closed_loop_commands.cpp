#include "tools/cli/closed_loop_commands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "configs/serving_reference.hpp"
#include "sim/cluster/serving_hardware.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/error_stats.hpp"
#include "tools/runs/figure_text.hpp"
#include "tools/runs/replay_to_end.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::ordered_json;

// Mean TTFT and time per output token of a replayed row's requests after each client's
// first (the warm-up: the clients' first requests all arrive at once).
class SteadyStateCollector final : public replay::ReplayObserver {
 public:
  explicit SteadyStateCollector(std::uint32_t warm_up) : warm_up_(warm_up) {}
  void on_request(const metrics::RequestRecord& r) override {
    if (r.status != metrics::RequestStatus::kCompleted || r.id < warm_up_) return;
    ttft_sum_ += r.ttft()->seconds();
    if (auto tpot = r.tbt_mean(metrics::TbtDefinition::kMeanGap); tpot && r.output_tokens > 1) {
      tpot_sum_ += tpot->seconds();
      ++tpot_count_;
    }
    ++count_;
  }
  std::optional<double> ttft_s() const { return count_ ? std::optional(ttft_sum_ / count_) : std::nullopt; }
  std::optional<double> tpot_s() const {
    return tpot_count_ ? std::optional(tpot_sum_ / tpot_count_) : std::nullopt;
  }

 private:
  std::uint64_t warm_up_;
  double ttft_sum_ = 0, tpot_sum_ = 0;
  std::uint64_t count_ = 0, tpot_count_ = 0;
};

// The model and SKU a row names, in the row's precision; an error names the line.
struct Resolved {
  cluster::ModelSpec model;
  cluster::SkuSpec sku;
};
Expected<Resolved> resolve_row(const configs::ClosedLoopRow& row, const configs::Catalog& catalog,
                               const std::string& path) {
  const std::string where = path + ":" + std::to_string(row.line) + ": ";
  const auto* model = catalog.find_model(row.model);
  if (model == nullptr) {
    return Error{where + "model_path: no model '" + row.model +
                 "' in the catalog (models.json by name or hf_id, hf/<org>/<name>/config.json under --catalog, or "
                 "model_configs/<org>--<name>.json beside the table)"};
  }
  const auto* sku = catalog.find_sku(row.gpu);
  if (sku == nullptr) return Error{where + "system: no SKU or alias '" + row.gpu + "' in hardware.json"};
  if (sku->gpus_per_node % row.tensor_parallel != 0) {
    return Error{where + "tp_size: " + std::to_string(row.tensor_parallel) + " does not divide " + sku->name +
                 "'s " + std::to_string(sku->gpus_per_node) + " GPUs per server"};
  }
  Resolved out{*model, *sku};
  if (row.weights) out.model.weights = *row.weights;
  return out;
}

// The table's rows with the models its folder brings.
Expected<std::vector<configs::ClosedLoopRow>> read_table(const std::string& path, configs::Catalog& catalog) {
  auto rows = configs::read_closed_loop_reference(path);
  if (!rows) return rows.error();
  if (auto added = configs::add_table_models(catalog, path, *rows); !added) return added.error();
  return rows;
}

struct ErrorSet {
  std::vector<double> ttft, tpot;
  void add(const std::optional<double>& ttft_error, const std::optional<double>& tpot_error) {
    if (ttft_error) ttft.push_back(std::fabs(*ttft_error));
    if (tpot_error) tpot.push_back(std::fabs(*tpot_error));
  }
};

ordered_json summary_json(std::vector<double> errors) {
  if (errors.empty()) return {{"rows", 0}, {"median", nullptr}, {"p90", nullptr}};
  std::sort(errors.begin(), errors.end());
  return {{"rows", errors.size()}, {"median", median(errors)}, {"p90", percentile(errors, 90)}};
}

std::string summary_text(std::vector<double> errors) {
  if (errors.empty()) return "-";
  std::sort(errors.begin(), errors.end());
  char text[64];
  std::snprintf(text, sizeof text, "%5.1f%% / %5.1f%% (%zu)", 100 * median(errors), 100 * percentile(errors, 90),
                errors.size());
  return text;
}

}  // namespace

Expected<std::set<std::string>> parse_shapes(const std::string& option, const std::string& text) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string shape = text.substr(start, comma - start);
    const auto x = shape.find('x');
    const auto all_digits = [](const std::string& s) {
      return !s.empty() && s.size() < 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (x == std::string::npos || !all_digits(shape.substr(0, x)) || !all_digits(shape.substr(x + 1))) {
      return Error{option + ": expected prompt x output shapes such as 1024x1024,8192x1024, got '" + shape + "'"};
    }
    out.insert(std::to_string(std::stoul(shape.substr(0, x))) + "x" + std::to_string(std::stoul(shape.substr(x + 1))));
    start = comma + 1;
  }
  return out;
}

cluster::SteadyLoad closed_loop_load(const configs::ClosedLoopRow& row, const cluster::ModelSpec& model,
                                     const cluster::SkuSpec& sku) {
  cluster::SteadyLoad load;
  load.model = model;
  load.sku = sku;
  load.tensor_parallel = row.tensor_parallel;
  load.prompt_tokens = row.prompt_tokens;
  load.output_tokens = row.output_tokens;
  load.ttft_mean_s = row.ttft_s;
  load.e2e_mean_s = row.ttft_s + (row.output_tokens - 1.0) * row.tpot_s;
  load.rate_per_s = row.clients / load.e2e_mean_s;
  load.fit_first_token = false;  // judged by the replay, whose waves the equation does not see
  return load;
}

bool clients_fit_kv(const configs::ClosedLoopRow& row, const cluster::ModelSpec& model, const cluster::SkuSpec& sku) {
  // The KV room of the instance the row's replay serves on.
  const configs::ScenarioConfig scenario = configs::closed_loop_scenario(row, 2, 0);
  const auto& served = std::get<configs::LlmServingSpec>(scenario.serving);
  const double capacity = static_cast<double>(cluster::instance_kv_tokens(served, model, sku, row.tensor_parallel));
  return double(row.clients) * (row.prompt_tokens + row.output_tokens) <= capacity;
}

Expected<ClosedLoopFit> closed_loop_fit_loads(const std::string& path, configs::Catalog& catalog,
                                              const std::set<std::string>& fit_on) {
  auto rows = read_table(path, catalog);
  if (!rows) return rows.error();
  ClosedLoopFit fit;
  for (const auto& row : *rows) {
    if (!row.refused.empty()) {
      ++fit.refused;
      continue;
    }
    if (!fit_on.empty() && !fit_on.count(row.shape())) {
      ++fit.held_out;
      continue;
    }
    auto resolved = resolve_row(row, catalog, path);
    if (!resolved) return resolved.error();
    if (!clients_fit_kv(row, resolved->model, resolved->sku)) {
      ++fit.waiting_for_kv;
      continue;
    }
    fit.loads.push_back(closed_loop_load(row, resolved->model, resolved->sku));
    fit.lines.push_back(row.line);
  }
  return fit;
}

int run_validate_closed_loop(const ValidateCommandOptions& options, std::ostream& out, std::ostream& err) {
  const std::uint32_t requests_per_client = options.requests_per_client.value_or(kDefaultRequestsPerClient);
  if (requests_per_client < 2) {
    return fail(err, "--requests-per-client: expected at least 2 (the first of each client is warm-up)", kExitBadInput);
  }
  auto fit_on = parse_shapes("--fit-on", options.fit_on);
  if (!fit_on) return fail(err, fit_on.error().message, kExitBadInput);
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), options.catalog);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto rows = read_table(options.reference, *catalog);
  if (!rows) return fail(err, rows.error().message, kExitBadInput);
  for (const auto& row : *rows) {
    if (!row.refused.empty()) continue;
    if (auto resolved = resolve_row(row, *catalog, options.reference); !resolved) {
      return fail(err, resolved.error().message, kExitBadInput);
    }
    // Bounded like a serving reference's rows, so no row replays for days.
    if (std::uint64_t{row.clients} * requests_per_client > configs::kMaxReferenceRequests) {
      return fail(err, options.reference + ":" + std::to_string(row.line) + ": batch_size x --requests-per-client: " +
                           "expected at most " + std::to_string(configs::kMaxReferenceRequests) + " requests to replay",
                  kExitBadInput);
    }
  }
  ordered_json report = {{"rows", ordered_json::array()}};
  // Per SKU: the rows held out of the fit, and all modelled rows.
  std::map<std::string, ErrorSet> held_out, all;
  char line[400];
  if (!options.json) {
    out << "line  model                      GPU         TP  shape       clients   TTFT ms meas/pred          "
           "TPOT ms meas/pred\n";
  }
  for (const auto& row : *rows) {
    ordered_json entry = {{"line", row.line}, {"id", row.id}};
    if (!row.refused.empty()) {
      entry["refused"] = row.refused;
      report["rows"].push_back(entry);
      if (!options.json) out << std::to_string(row.line) << "  refused: " << row.refused << '\n';
      continue;
    }
    const auto resolved = resolve_row(row, *catalog, options.reference);
    const std::string where = options.reference + ":" + std::to_string(row.line);
    SteadyStateCollector collector(row.clients);
    auto finished = replay_to_end(configs::closed_loop_scenario(row, requests_per_client, options.seed),
                                  where, *catalog, collector);
    if (!finished) return fail(err, finished.error().message, kExitBadInput);
    const auto ttft = collector.ttft_s(), tpot = collector.tpot_s();
    const auto ttft_error = ttft ? measured_error(*ttft, row.ttft_s) : std::nullopt;
    const auto tpot_error = tpot ? measured_error(*tpot, row.tpot_s) : std::nullopt;
    const bool fitted = fit_on->count(row.shape()) > 0;
    const std::string& sku = resolved->sku.name;
    all[sku].add(ttft_error, tpot_error);
    if (!fitted) held_out[sku].add(ttft_error, tpot_error);
    const bool fits_kv = clients_fit_kv(row, resolved->model, resolved->sku);
    const auto as_json = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
    entry.update({{"model", row.model},
                  {"sku", sku},
                  {"tensor_parallel", row.tensor_parallel},
                  {"shape", row.shape()},
                  {"clients", row.clients},
                  {"fitted", fitted},
                  {"clients_fit_kv", fits_kv},
                  {"ttft_s", as_json(ttft)},
                  {"tpot_s", as_json(tpot)},
                  {"errors", {{"ttft", as_json(ttft_error)}, {"tpot", as_json(tpot_error)}}}});
    report["rows"].push_back(entry);
    if (!options.json) {
      std::snprintf(line, sizeof line, "%4zu  %-26.26s %-10.10s %3u  %-10s %7u  %8.1f %s %s  %7.2f %s %s%s%s\n",
                    row.line, row.model.c_str(), sku.c_str(), row.tensor_parallel, row.shape().c_str(), row.clients,
                    row.ttft_s * 1e3, fixed_or(ttft ? std::optional(*ttft * 1e3) : std::nullopt, 1, "-", 8).c_str(),
                    percent_or_dash(ttft_error, 7).c_str(), row.tpot_s * 1e3,
                    fixed_or(tpot ? std::optional(*tpot * 1e3) : std::nullopt, 2, "-", 7).c_str(),
                    percent_or_dash(tpot_error, 7).c_str(), fitted ? "  (fitted)" : "",
                    fits_kv ? "" : "  (clients wait for KV)");
      out << line << std::flush;
    }
  }
  ordered_json by_sku = ordered_json::object();
  if (!options.json) {
    out << "\nper SKU, |error| median / p90 (rows)   " << (fit_on->empty() ? "" : "held out of the fit:          ")
        << "all rows:\n";
  }
  for (const auto& [sku, errors] : all) {
    const ErrorSet& held = held_out[sku];
    by_sku[sku] = {{"held_out", {{"ttft", summary_json(held.ttft)}, {"tpot", summary_json(held.tpot)}}},
                   {"all", {{"ttft", summary_json(errors.ttft)}, {"tpot", summary_json(errors.tpot)}}}};
    if (!options.json) {
      out << "  " << sku << "\n";
      for (const auto& [name, h, a] : {std::tuple{"TTFT", &held.ttft, &errors.ttft},
                                       std::tuple{"TPOT", &held.tpot, &errors.tpot}}) {
        out << "    " << name << "  " << (fit_on->empty() ? "" : summary_text(*h) + "    ") << summary_text(*a) << '\n';
      }
    }
  }
  report["by_sku"] = by_sku;
  report["fit_on"] = ordered_json(std::vector<std::string>(fit_on->begin(), fit_on->end()));
  if (options.json) out << report.dump(2) << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
