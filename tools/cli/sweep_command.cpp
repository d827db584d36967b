#include "tools/cli/sweep_command.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>

#include "configs/catalog.hpp"
#include "configs/config_file.hpp"
#include "configs/json_difference.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/cli/metrics_server.hpp"
#include "tools/runs/replay_to_end.hpp"
#include "tools/runs/signal_cleanup.hpp"
#include "tools/runs/run_inputs.hpp"
#include "tools/runs/run_outputs.hpp"
#include "tools/cli/sweep_mpi.hpp"
#include "tools/runs/sweep_plan.hpp"
#include "traces/json_text.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The headline metrics of a run, as (CSV column, path in summary.json).
constexpr std::pair<const char*, const char*> kMetrics[] = {
    {"arrived", "/requests/arrived"},
    {"completed", "/requests/completed"},
    {"dropped", "/requests/dropped"},
    {"in_flight", "/requests/in_flight"},
    {"slo_attainment", "/slo/attainment"},
    {"ttft_p50_s", "/latency_s/ttft/p50"},
    {"ttft_p99_s", "/latency_s/ttft/p99"},
    {"tbt_p50_s", "/latency_s/tbt/p50"},
    {"tbt_p99_s", "/latency_s/tbt/p99"},
    {"e2e_p50_s", "/latency_s/e2e/p50"},
    {"e2e_p99_s", "/latency_s/e2e/p99"},
    {"completed_per_s", "/throughput/completed_per_s"},
    {"gpu_hours", "/cost/gpu_hours"},
    {"cost_usd", "/cost/usd"},
    {"mean_instances", "/scaling/mean_instances"},
    {"scale_ups", "/scaling/scale_ups"},
    {"scale_downs", "/scaling/scale_downs"},
};

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + '"';
}

// A JSON value in a CSV cell: strings bare, numbers in full precision.
std::string cell(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_number_float()) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value.get<double>());
    return buffer;
  }
  return csv_field(value.dump());
}

}  // namespace

Expected<json> read_sweep_run_summary(std::string_view text, const std::string& file) {
  const json summary = json::parse(text, nullptr, false);
  if (summary.is_discarded()) return Error{file + ": does not parse"};
  if (!summary.is_object()) return Error{file + ": expected a run's summary object"};
  for (const auto& [column, path] : kMetrics) {
    const json::json_pointer pointer(path);
    const std::string_view key(path);
    if (!summary.contains(pointer)) {
      if (key.starts_with("/scaling/")) continue;  // a run without scaling has none
      return Error{file + ": " + path + ": expected a number"};
    }
    const json& value = summary[pointer];
    if (key.starts_with("/latency_s/") && value.is_null()) continue;  // no request measured
    // What a run can have written: counts are whole, shares within [0, 1], the rest >= 0.
    const bool count = key.starts_with("/requests/") || key == "/scaling/scale_ups" || key == "/scaling/scale_downs";
    const bool share = key == "/slo/attainment";
    const bool fits = count ? value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0)
                            : value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() >= 0 &&
                                  (!share || value.get<double>() <= 1);
    if (!fits) {
      return Error{file + ": " + path + ": expected " +
                   (count ? "a whole count >= 0" : share ? "a share in [0, 1]" : "a finite number >= 0") + ", got " +
                   traces::json_for_message(value)};
    }
  }
  const auto count = [&](const char* path) { return summary[json::json_pointer(path)].get<std::uint64_t>(); };
  if (count("/requests/arrived") != count("/requests/completed") + count("/requests/dropped") +
                                        count("/requests/in_flight")) {
    return Error{file + ": /requests: expected arrived = completed + dropped + in_flight"};
  }
  return summary;
}

Expected<json> read_finished_run(const std::string& folder) {
  const std::string file = folder + "/summary.json";
  auto text = configs::read_config_text(file, "run summary");
  if (!text) return text.error();
  auto summary = read_sweep_run_summary(*text, file);
  if (!summary) return summary.error();
  for (const char* name : RunFolderWriter::kFiles) {
    if (configs::path_kind(folder + "/" + name) != configs::PathKind::kFile) {
      return Error{folder + "/" + name + ": missing beside summary.json (or not a file)"};
    }
  }
  // requests.csv holds a row per arrived request (a header first).
  std::ifstream requests(folder + "/requests.csv", std::ios::binary);
  const auto lines = static_cast<std::uint64_t>(
      std::count(std::istreambuf_iterator<char>(requests), std::istreambuf_iterator<char>(), '\n'));
  const std::uint64_t arrived = (*summary)["requests"]["arrived"].get<std::uint64_t>();
  if (!requests.is_open() || lines != arrived + 1) {
    return Error{folder + "/requests.csv: expected a header and " + std::to_string(arrived) +
                 " rows (summary.json's /requests/arrived), found " + std::to_string(lines) + " lines"};
  }
  return summary;
}

namespace {

std::string run_folder(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "runs/%04zu", index);
  return name;
}

// The catalogs the runs use, by their `catalog` folder ("" for the bundled one alone).
using Catalogs = std::map<std::string, configs::Catalog>;

// Reading the plan, each catalog is read once, when the first run that uses it is checked
// (errors name the file), and every run's deployment is checked against its catalog: a
// grid value the catalog refuses (a parallelism its servers cannot take) stops the sweep
// before the first run starts, not half way.
RunCheck checked_against_catalogs(Catalogs& catalogs) {
  return [&catalogs](const configs::ScenarioConfig& config) -> Status {
    const std::string key = config.catalog.value_or("");
    auto found = catalogs.find(key);
    if (found == catalogs.end()) {
      auto catalog = configs::load_scenario_catalog(config);
      if (!catalog) return catalog.error();
      found = catalogs.emplace(key, std::move(*catalog)).first;
    }
    return run::ScenarioRun::check(config, found->second);
  };
}

class SweepRunner {
 public:
  SweepRunner(const SweepPlan& plan, const Catalogs& catalogs, std::string out_dir, bool resume, std::ostream& err)
      : plan_(plan), catalogs_(catalogs), out_dir_(std::move(out_dir)), resume_(resume), err_(err) {}

  std::string header() const {
    std::string out = "run,folder";
    for (const auto& key : plan_.override_keys) out += "," + csv_field(key);
    out += ",trace,seed,status";
    for (const auto& [column, path] : kMetrics) out += std::string(",") + column;
    return out;
  }

  // The run replayed into its folder, or read back from it when resuming and it finished
  // before: its outcome (kRan, kResumed, kFailed, kUnwritten: its folder could not be
  // written) then its CSV row (no newline), one string so that MPI ranks can send it as it is.
  static constexpr char kRan = '+', kResumed = 'r', kFailed = '!', kUnwritten = 'w';
  std::string run(std::size_t index) {
    const SweepRun run = plan_.run(index);
    auto config = plan_.config_of(run);  // checked when the plan was read
    const std::string folder = out_dir_ + "/" + run_folder(index);
    json summary;
    std::string status = "ok";
    char outcome = kRan;
    if (resume_ && configs::path_kind(folder + "/summary.json") != configs::PathKind::kMissing) {
      outcome = kResumed;
      auto read = read_finished_run(folder);
      if (read && config) read = belongs_to(std::move(*read), *config, folder);
      if (read) {
        summary = std::move(*read);
      } else {
        status = "error: " + read.error().message + " (remove the run's folder to run it again)";
        report(index, "", status);
      }
    } else if (!config) {
      status = "error: " + config.error().message;
      report(index, "", status);
    } else {
      std::ostringstream warnings;
      bool unwritten = false;
      status = replay_into(*config, folder, warnings, summary, unwritten);
      report(index, warnings.str(), status);
      if (unwritten) outcome = kUnwritten;
    }
    if (status != "ok" && outcome != kUnwritten) outcome = kFailed;
    std::string row = outcome + std::to_string(index) + "," + run_folder(index);
    for (const auto& key : plan_.override_keys) {
      const auto o = std::find_if(run.overrides.begin(), run.overrides.end(), [&](const auto& x) { return x.path == key; });
      row += "," + (o == run.overrides.end() ? std::string() : cell(o->value));
    }
    const std::string seed = config ? std::to_string(config->seed) : std::string();
    row += "," + csv_field(run.trace ? run.trace->path : "") + "," + seed + "," + csv_field(status);
    for (const auto& [column, path] : kMetrics) {
      const json::json_pointer pointer(path);
      row += "," + (summary.contains(pointer) ? cell(summary[pointer]) : std::string());
    }
    return row;
  }

 private:
  // "ok" or "error: ..."; `unwritten` when the failure was the run folder's (I/O, exit 3).
  std::string replay_into(const configs::ScenarioConfig& config, const std::string& folder, std::ostream& warnings,
                          json& summary, bool& unwritten) {
    std::error_code error;
    fs::create_directories(folder, error);
    unwritten = true;
    if (error) return "error: " + folder + ": cannot create the run folder: " + error.message();
    RunFolderWriter writer(folder, config.replay, warnings, false);
    if (auto status = writer.open_status(); !status) return "error: " + status.error().message;
    unwritten = false;
    auto finished = replay_to_end(config, plan_.config_path, catalogs_.at(config.catalog.value_or("")), writer);
    if (!finished) return "error: " + finished.error().message;
    unwritten = true;
    if (auto status = writer.commit(finished->summary); !status) return "error: " + status.error().message;
    unwritten = false;
    summary = json(finished->summary);
    return "ok";
  }

  // A finished run's summary, if it was written by this run of the plan: its seed and
  // resolved config are the run's own (another replay into the folder, or an edit, would
  // put other figures in this run's row).
  static Expected<json> belongs_to(json summary, const configs::ScenarioConfig& config, const std::string& folder) {
    const std::string file = folder + "/summary.json";
    if (summary.value("seed", json()) != json(config.seed)) {
      return Error{file + ": seed: expected this run's " + std::to_string(config.seed) + ", got " +
                   traces::json_for_message(summary.value("seed", json()))};
    }
    if (auto differs = configs::first_difference(configs::to_json(config), summary.value("config", json()))) {
      return Error{file + ": config." + *differs + " (in this run of the plan, then in the file)"};
    }
    return summary;
  }

  void report(std::size_t index, const std::string& warnings, const std::string& status) {
    if (warnings.empty() && status == "ok") return;
    std::lock_guard lock(mutex_);
    std::istringstream lines(warnings);
    for (std::string line; std::getline(lines, line);) err_ << run_folder(index) << ": " << line << '\n';
    if (status != "ok") err_ << run_folder(index) << ": " << status << '\n';
  }

  const SweepPlan& plan_;
  const Catalogs& catalogs_;
  std::string out_dir_;
  bool resume_;
  std::ostream& err_;
  std::mutex mutex_;
};

// What --metrics-port publishes during a sweep: the runs finished by outcome out of the
// plan's, and the wall time. finished() may be called from any thread.
class SweepMetrics {
 public:
  SweepMetrics(MetricsServer* server, std::size_t total) : server_(server), total_(total) { publish(); }

  void finished(const std::string& row) {
    if (server_ == nullptr) return;
    const std::lock_guard lock(mutex_);
    ++outcomes_[row.front() == SweepRunner::kRan ? 0 : row.front() == SweepRunner::kResumed ? 1 : 2];
    publish();
  }

 private:
  void publish() {
    if (server_ == nullptr) return;
    const std::size_t done = outcomes_[0] + outcomes_[1] + outcomes_[2];
    std::string text;
    append_metric(text, "meshsim_sweep_runs", "gauge", "Runs in the sweep", static_cast<double>(total_));
    append_metric(text, "meshsim_sweep_progress", "gauge", "Fraction of the sweep's runs finished",
                  total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0);
    text += "# HELP meshsim_sweep_runs_finished_total Runs finished, by outcome\n"
            "# TYPE meshsim_sweep_runs_finished_total counter\n";
    const char* names[] = {"ran", "resumed", "failed"};
    for (int i = 0; i < 3; ++i) {
      text += "meshsim_sweep_runs_finished_total{outcome=\"" + std::string(names[i]) + "\"} " +
              std::to_string(outcomes_[static_cast<std::size_t>(i)]) + '\n';
    }
    append_metric(text, "meshsim_wall_seconds", "gauge", "Wall-clock time since the sweep started",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    server_->publish(std::move(text));
  }

  MetricsServer* server_;
  std::size_t total_;
  std::array<std::size_t, 3> outcomes_{};  // ran, resumed, failed
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::vector<std::string> run_on_threads(SweepRunner& runner, std::size_t count, unsigned threads,
                                        SweepMetrics& metrics) {
  std::vector<std::string> rows(count);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      rows[i] = runner.run(i);
      metrics.finished(rows[i]);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  return rows;
}

// What the runs read besides the grid: the scenario file as written, the catalogs and the
// traces (by content).
Expected<json> sweep_inputs(const SweepPlan& plan) {
  auto scenario = configs::read_config_file(plan.config_path);
  if (!scenario) return scenario.error();
  std::vector<const configs::ScenarioConfig*> configs;
  for (const configs::ScenarioConfig& config : plan.distinct_inputs) configs.push_back(&config);
  auto digests = input_digests(configs);
  if (!digests) return digests.error();
  (*digests)["scenario"] = std::move(*scenario);
  return digests;
}

// The output folder made ready: new, or (resuming) one holding a sweep of the same runs
// and inputs. Refused as the other commands refuse: an occupied folder is an output error,
// a resume fed another grid or other inputs is bad input.
struct Refusal {
  std::string message;
  int code = kExitOk;
};
Refusal prepare(const SweepPlan& plan, const SweepCommandOptions& options) {
  const fs::path out(options.out_dir);
  const fs::path record = out / "sweep.json";
  auto inputs = sweep_inputs(plan);
  if (!inputs) return {inputs.error().message, kExitBadInput};
  std::error_code error;
  if (configs::path_kind(record) != configs::PathKind::kMissing) {
    if (!options.resume) {
      return {options.out_dir + ": holds a sweep already: pass --resume to finish it, or another --out",
              kExitOutputError};
    }
    std::ifstream in(record);
    json before = json::parse(in, nullptr, false);
    // (A value that did not parse compares unequal to nothing: it must be refused first.)
    if (!before.is_object()) {
      return {record.string() + ": not a sweep's record (a JSON object): remove the folder to start over, or use "
                                "another --out",
              kExitBadInput};
    }
    const json recorded_inputs = before.value("inputs", json());
    before.erase("inputs");
    if (before != plan.document) {
      return {options.out_dir + ": holds a sweep of other runs than " + options.grid +
                  " (sweep.json differs): resume it with its own grid, or use another --out",
              kExitBadInput};
    }
    if (const Status same = same_inputs(recorded_inputs, *inputs, options.out_dir); !same) {
      return {same.error().message, kExitBadInput};
    }
    return {};
  }
  for (const auto& entry : fs::directory_iterator(out, error)) {
    if (entry.path().filename() == FolderLock::kFileName) continue;  // ours
    return {options.out_dir + ": exists and is not empty: a sweep writes into a new folder", kExitOutputError};
  }
  fs::create_directories(out / "runs", error);
  if (error) return {options.out_dir + ": cannot create the output folder: " + error.message(), kExitOutputError};
  json document = plan.document;
  document["inputs"] = std::move(*inputs);
  AtomicFile file(record.string());
  file.stream() << document.dump(2) << '\n';
  if (const Status written = file.commit(); !written) return {written.error().message, kExitOutputError};
  return {};
}

// The rows without their outcome characters.
Status write_csv(const std::string& path, const std::string& header, const std::vector<std::string>& rows) {
  AtomicFile file(path);
  file.stream() << header << '\n';
  for (const auto& row : rows) file.stream() << std::string_view(row).substr(1) << '\n';
  return file.commit();
}

std::size_t count_outcome(const std::vector<std::string>& rows, char outcome) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [outcome](const std::string& row) { return row.front() == outcome; }));
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto wall_start = std::chrono::steady_clock::now();
#ifdef MESHSIM_HAVE_MPI
  std::unique_ptr<MpiSession> mpi;
  if (launched_by_mpi()) mpi = std::make_unique<MpiSession>();
  const bool leader = !mpi || mpi->rank() == 0;
#else
  if (launched_by_mpi()) {
    return fail(err, "meshsim sweep: started by mpirun, but this build has no MPI (install libopenmpi-dev and rebuild)",
                kExitBadInput);
  }
  const bool leader = true;
#endif
  // Every rank reads the plan (it is small and deterministic); rank 0 alone reports
  // errors and prepares the folder, then tells the others whether to go on.
  Catalogs catalogs;
  auto plan = read_sweep_plan(options.grid, options.catalog, options.sets, checked_against_catalogs(catalogs));
  int code = kExitOk;
  std::unique_ptr<MetricsServer> server;  // rank 0's
  std::optional<FolderLock> lock;         // rank 0 holds the folder for the whole sweep
  if (leader) {
    if (options.threads > kMaxConcurrentRuns) {
      code = fail(err, "--threads: expected 0 (one per core) to " + std::to_string(kMaxConcurrentRuns) + ", got " +
                           std::to_string(options.threads), kExitBadInput);
    } else if (!plan) {
      code = fail(err, plan.error().message, kExitBadInput);
    } else if (auto locked = FolderLock::acquire(options.out_dir, "meshsim sweep"); !locked) {
      code = fail(err, locked.error().message, kExitOutputError);
    } else {
      lock.emplace(std::move(*locked));
      if (const Refusal refused = prepare(*plan, options); refused.code != kExitOk) {
        code = fail(err, refused.message, refused.code);
      } else if (options.metrics_listen) {
        auto started = MetricsServer::start(*options.metrics_listen);
        if (started) {
          server = std::move(*started);
          err << "metrics at " << server->url() << '\n';
        } else {
          code = fail(err, started.error().message, kExitBadInput);
        }
      }
    }
  }
#ifdef MESHSIM_HAVE_MPI
  if (mpi) code = mpi->broadcast(code);
#endif
  if (code != kExitOk) return code;

  SweepRunner runner(*plan, catalogs, options.out_dir, options.resume, err);
  const std::size_t count = plan->size();
  SweepMetrics metrics(server.get(), count);
  std::vector<std::string> rows;
  unsigned workers = 1;
  bool distributed = false;
#ifdef MESHSIM_HAVE_MPI
  if (mpi) {
    distributed = true;
    workers = static_cast<unsigned>(mpi->size());
    rows = mpi->distribute(
        count, [&](std::size_t i) { return runner.run(i); },
        [&](std::size_t, const std::string& row) { metrics.finished(row); });
    if (!leader) return kExitOk;  // rank 0 reports
  }
#endif
  if (!distributed) {
    workers = options.threads > 0 ? options.threads
                                  : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxConcurrentRuns);
    workers = static_cast<unsigned>(std::min<std::size_t>(workers, std::max<std::size_t>(count, 1)));
    rows = run_on_threads(runner, count, workers, metrics);
  }
  const std::string csv = options.out_dir + "/sweep.csv";
  if (auto written = write_csv(csv, runner.header(), rows); !written) {
    return fail(err, written.error().message, kExitOutputError);
  }
  const std::size_t unwritten = count_outcome(rows, SweepRunner::kUnwritten);
  const std::size_t failed = count_outcome(rows, SweepRunner::kFailed) + unwritten;
  if (!options.quiet) {
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    char line[200];
    std::snprintf(line, sizeof line, "meshsim sweep: %zu runs (%zu resumed, %zu failed) in %.2f s on %u %s\n", count,
                  count_outcome(rows, SweepRunner::kResumed), failed, wall_s, workers,
                  distributed ? "MPI processes" : "threads");
    out << line << "outputs     " << csv << ", " << options.out_dir << "/runs/NNNN/\n";
  }
  // A run that could not be written (a full disk) is an output error, whatever else failed.
  return unwritten > 0 ? kExitOutputError : failed == 0 ? kExitOk : kExitBadInput;
}

}  // namespace meshsim::cli
