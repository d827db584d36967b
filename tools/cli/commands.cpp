#include "tools/cli/commands.hpp"

#include <charconv>
#include <filesystem>
#include <ostream>
#include <set>
#include <sstream>
#include <tuple>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "configs/catalog.hpp"
#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "sim/run/scenario_run.hpp"
#include "configs/profile_csv.hpp"
#include "sim/perf/perf_profile.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/autoscale/scaling_harness.hpp"
#include "sim/replay/replay.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/cli/live_metrics.hpp"
#include "tools/cli/metrics_server.hpp"
#include "tools/runs/replay_to_end.hpp"
#include "tools/runs/run_outputs.hpp"
#include "tools/runs/scheduler_prometheus.hpp"
#include "tools/runs/trace_events.hpp"
#include "traces/trace_stats.hpp"
#include "traces/workload_source.hpp"
#include "sim/shared/shared_cluster.hpp"

namespace meshsim::cli {

namespace {

// The scenario a replay runs: the config file (or the default), with the command line's
// overrides applied and checked. Errors name the option.
Expected<configs::ScenarioConfig> replay_config(const ReplayCommandOptions& options, const std::string& config_path) {
  auto loaded = load_scenario_for_command(config_path, {options.trace, options.trace_format, options.seed,
                                                        options.sets, options.catalog});
  if (!loaded) return loaded.error();
  configs::ScenarioConfig config = std::move(*loaded);
  if (auto scaled = apply_rate_scale(config, options.rate_scale); !scaled) return scaled.error();
  if (options.autoscaler) {
    const auto policy = configs::kAutoscalerPolicyNames.parse(*options.autoscaler);
    if (!policy) {
      return Error{"--autoscaler: expected one of " + configs::kAutoscalerPolicyNames.accepted() + ", got '" +
                   *options.autoscaler + "'"};
    }
    const bool llm = std::holds_alternative<configs::LlmServingSpec>(config.serving);
    if (*policy != configs::AutoscalerPolicy::kNone && !llm) {
      return Error{"--autoscaler: autoscaling needs the llm serving model, and " + config_path + " uses another"};
    }
    config.autoscaler.policy = *policy;
  }
  if (options.scaling_log) config.scaling.log = true;
  if (options.until_s) {
    const auto until = engine::SimTime::from_seconds_checked(*options.until_s);
    if (!until || *until < engine::SimTime::zero()) {
      return Error{"--until: expected a number of seconds in [0, 1e12], got " + number_text(*options.until_s)};
    }
    config.replay.until = *until;
  }
  return config;
}

// --trace-events must not name one of the run folder's files: one output would overwrite
// the other (or leave it corrupt).
Status check_trace_events_path(const ReplayCommandOptions& options) {
  if (!options.trace_events) return Ok{};
  const auto same = [](const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ignored;
    return std::filesystem::weakly_canonical(a, ignored) == std::filesystem::weakly_canonical(b, ignored);
  };
  for (const char* file : RunFolderWriter::kFiles) {
    if (same(*options.trace_events, std::filesystem::path(options.out_dir) / file)) {
      return Error{"--trace-events: " + *options.trace_events + " is the run folder's " + file + " (--out " +
                   options.out_dir + "): give the timeline a path of its own"};
    }
  }
  return Ok{};
}

// The console's account of a finished replay: the summary table, wall time and speed,
// the core's scheduling latency on a shared cluster, where the outputs are.
void print_replay_report(std::ostream& out, const configs::ScenarioConfig& config, const FinishedReplay& finished,
                         const std::string& out_dir) {
  const auto& run = finished.run;
  const double wall_s = finished.wall_s;
  out << "meshsim replay: " << config.name << " on " << run->workload_description() << " (seed " << config.seed << ")\n"
      << format_summary_table(finished.summary);
  const double requests = static_cast<double>(run->replay().metrics().counts().arrived);
  char line[160];
  std::snprintf(line, sizeof line, "wall time   %.3f s (%.0f simulated requests/s, %.0f events/s)\n", wall_s,
                wall_s > 0 ? requests / wall_s : 0.0,
                wall_s > 0 ? static_cast<double>(finished.result.events) / wall_s : 0.0);
  out << line;
  if (const auto* shared = run->shared()) {
    // Wall-clock time in the core per placement (serving instances and batch jobs).
    const auto& latency = shared->core().metrics().task_schedule_latency_ms;
    std::snprintf(line, sizeof line, "scheduling  %llu submissions to the core, p50 %.1f us, p99 %.1f us (wall)\n",
                  static_cast<unsigned long long>(latency.count), latency.quantile(0.5) * 1e3,
                  latency.quantile(0.99) * 1e3);
    out << line;
  }
  out << "outputs     " << out_dir << "/{summary.json,requests.csv,timeseries.csv,metrics.prom}\n";
}

}  // namespace

int run_replay_command(const ReplayCommandOptions& options, std::ostream& out, std::ostream& err) {
  const std::string config_path = options.config_path.empty() ? configs::default_scenario_path() : options.config_path;
  auto loaded = replay_config(options, config_path);
  if (!loaded) return fail(err, loaded.error().message, kExitBadInput);
  const configs::ScenarioConfig& config = *loaded;
  auto catalog = configs::load_scenario_catalog(config);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  if (auto status = check_trace_events_path(options); !status) {
    return fail(err, status.error().message, kExitBadInput);
  }
  auto lock = FolderLock::acquire(options.out_dir, "meshsim replay");  // held to the end
  if (!lock) return fail(err, lock.error().message, kExitOutputError);
  RunFolderWriter writer(options.out_dir, config.replay, err);
  if (auto status = writer.open_status(); !status) {
    return fail(err, status.error().message, kExitOutputError);
  }

  std::unique_ptr<ChromeTraceWriter> timeline;
  if (options.trace_events) {
    timeline = std::make_unique<ChromeTraceWriter>(*options.trace_events);
    if (auto status = timeline->open_status(); !status) {
      return fail(err, status.error().message, kExitOutputError);
    }
  }
  run::RunHooks hooks;
  hooks.timeline = timeline.get();
  if (config.scaling.log) {
    // Bare lines on the command's error stream, no wall-clock stamp: the simulated time
    // is in the line.
    auto logger = std::make_shared<spdlog::logger>("scaling", std::make_shared<spdlog::sinks::ostream_sink_st>(err));
    logger->set_pattern("%v");
    hooks.scaling_log = [logger](std::string_view line) { logger->info("{}", line); };
  }
  std::unique_ptr<MetricsServer> server;
  std::optional<LiveReplayMetrics> live;
  if (options.metrics_listen) {
    auto started = MetricsServer::start(*options.metrics_listen);
    if (!started) return fail(err, started.error().message, kExitBadInput);
    server = std::move(*started);
    live.emplace(*server, writer);
    err << "metrics at " << server->url() << '\n';
  }
  replay::ReplayObserver& observer = live ? static_cast<replay::ReplayObserver&>(*live) : writer;
  auto finished = replay_to_end(config, config_path, *catalog, observer, std::move(hooks),
                                [&live](const run::ScenarioRun& run) {
                                  if (live) live->watch(run);
                                });
  if (!finished) {
    writer.end_progress();
    return fail(err, finished.error().message, kExitBadInput);
  }
  const auto& run = finished->run;
  auto& summary = finished->summary;
  if (!options.sets.empty()) summary["overrides"] = options.sets;  // what the resolved config was made with
  if (auto status = writer.commit(summary); !status) {
    return fail(err, status.error().message, kExitOutputError);
  }
  // Beside the run folder's files, not among them: the core's latency histograms are
  // wall-clock time, so this file differs from run to run.
  std::ostringstream finished_metrics;
  write_replay_metrics(finished_metrics, summary, run->shared() ? &run->shared()->core() : nullptr);
  if (live) live->publish_final(finished_metrics.str());
  AtomicFile prometheus(options.out_dir + "/metrics.prom");
  prometheus.stream() << finished_metrics.str();
  if (auto status = prometheus.commit(); !status) {
    return fail(err, status.error().message, kExitOutputError);
  }
  if (timeline) {
    if (auto status = timeline->commit(); !status) {
      return fail(err, status.error().message, kExitOutputError);
    }
  }
  if (!options.quiet) print_replay_report(out, config, *finished, options.out_dir);
  return kExitOk;
}

int run_fit_command(const FitCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto spec = trace_file_spec(options.trace, options.trace_format);
  if (!spec) {
    return fail(err, spec.error().message, kExitBadInput);
  }
  auto source = traces::open_trace_file(*spec);
  if (!source) {
    return fail(err, source.error().message, kExitBadInput);
  }
  auto stats = traces::summarize(**source);
  if (!stats) {
    return fail(err, stats.error().message, kExitBadInput);
  }
  auto document = configs::to_json(traces::fit_generator(*stats, options.name));
  char comment[400];
  std::snprintf(comment, sizeof comment,
                "Fitted by `meshsim fit-trace` to %s: %llu requests over %.1f s (%.3f req/s, inter-arrival CV "
                "%.3f), mean prompt %.1f tokens, mean output %.1f tokens.",
                std::filesystem::path(options.trace).filename().c_str(),
                static_cast<unsigned long long>(stats->requests), stats->duration_s, stats->rate_per_s,
                stats->interarrival_cv, stats->prompt_mean, stats->output_mean);
  document["comment"] = comment;
  out << document.dump(2) << '\n';
  return kExitOk;
}

int run_calibrate_command(const CalibrateCommandOptions& options, std::ostream& out, std::ostream& err) {
  // The user's SKUs and models over the bundled ones; their fits are what this writes.
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), options.catalog, false);
  if (!catalog) {
    return fail(err, catalog.error().message, kExitBadInput);
  }
  auto rows = configs::read_profile_csv(options.profile);
  if (!rows) {
    return fail(err, rows.error().message, kExitBadInput);
  }
  std::vector<cluster::ProfileRow> dropped;
  const auto kept = cluster::drop_non_monotonic(*rows, &dropped);
  std::set<std::tuple<std::string, std::string, std::uint32_t>> deployments;
  for (const auto& row : kept) deployments.emplace(row.model, row.hardware, row.tensor_parallel);
  std::vector<configs::PerfFit> fits;
  char line[200];
  err << "deployment                          rows   prefill MAPE   decode MAPE\n";
  for (const auto& [model, sku, tp] : deployments) {
    const auto m = catalog->models.find(model);
    const auto k = catalog->skus.find(sku);
    if (m == catalog->models.end() || k == catalog->skus.end()) {
      err << "skipped " << model << " on " << sku << ": not in the catalog (models.json / hardware.json)\n";
      continue;
    }
    const auto group = cluster::select_rows(kept, model, sku, tp);
    configs::PerfFit fit{model, sku, tp, cluster::fit_roofline(m->second, k->second, tp, group)};
    const auto error = cluster::profile_error(cluster::RooflinePerfModel(m->second, k->second, tp, fit.factors), group);
    std::snprintf(line, sizeof line, "%-34s %5zu %13.1f%% %12.1f%%\n",
                  (model + " " + sku + " TP" + std::to_string(tp)).c_str(), error.rows, error.prefill_mape,
                  error.decode_mape);
    err << line;
    fits.push_back(fit);
  }
  err << dropped.size() << " rows dropped as inconsistent (more prompts measured faster than fewer)\n";
  const std::string comment = "Roofline factors fitted by `meshsim calibrate --profile " +
                              std::filesystem::path(options.profile).filename().string() + "` (" +
                              std::to_string(kept.size()) + " rows used, " + std::to_string(dropped.size()) +
                              " inconsistent rows dropped). Regenerate rather than edit.";
  out << configs::perf_fits_to_json(fits, comment).dump(2) << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
