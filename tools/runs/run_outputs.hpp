#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/replay/replay.hpp"
#include "sim/run/scenario_run.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/runs/progress_bar.hpp"

namespace meshsim::cli {

// Writes a replay's requests.csv and timeseries.csv as the run goes (streamed, so memory
// does not grow with the trace) and drives the progress bar. Nothing appears under the
// final names until commit().
class RunFolderWriter final : public replay::ReplayObserver {
 public:
  // Warnings go to `warnings` (the command's error stream); `progress` false draws no
  // progress bar.
  // `replay` gives the TBT definition and the classes of service (a class column).
  RunFolderWriter(const std::string& folder, const replay::ReplayOptions& replay, std::ostream& warnings,
                  bool progress = true);
  // The files it writes in the folder.
  static constexpr const char* kFiles[] = {"summary.json", "requests.csv", "timeseries.csv"};

  Status open_status() const;
  void on_request(const metrics::RequestRecord& record) override;
  void on_interval(const metrics::TimeseriesRow& row) override;
  void on_progress(double fraction, engine::SimTime now) override;
  void on_warning(const std::string& message) override;
  // Ends the progress bar's line (before an error message).
  void end_progress() { progress_.finish(); }
  // Writes summary.json and moves all three files into place.
  Status commit(const nlohmann::ordered_json& summary);

 private:
  std::string folder_;
  metrics::TbtDefinition tbt_definition_;
  std::vector<std::string> class_names_;  // empty without classes
  AtomicFile requests_;
  AtomicFile timeseries_;
  AtomicFile summary_;
  ProgressBar progress_;
  std::ostream& warnings_;
};

// summary.json's sections (null when the run has no such part): what scaling did, and
// the batch jobs of a shared cluster (counts that add up, GPU-hours useful and lost,
// preemptions by reason).
nlohmann::json scaling_summary(const run::ScenarioRun& run, const replay::ReplayResult& result);
nlohmann::json batch_summary(const run::ScenarioRun& run, const replay::ReplayResult& result);

// The summary.json document of a finished replay: headline figures, then the resolved
// config. `scaling` and `batch` (null when nothing scaled, or no batch jobs shared the
// cluster) are their sections; `deployment` what the model and servers became
// (deployment_report.hpp; null for the fixed-latency model).
nlohmann::ordered_json make_summary(const nlohmann::json& resolved_config, std::uint64_t seed,
                                   const std::string& workload_source, const replay::ReplayResult& result,
                                   const metrics::RunMetrics& metrics, const nlohmann::json& scaling = nullptr,
                                   const nlohmann::json& batch = nullptr, const nlohmann::json& roofline = nullptr,
                                   const nlohmann::ordered_json& deployment = nullptr);

// A human-readable table of the summary, for the terminal.
std::string format_summary_table(const nlohmann::ordered_json& summary);

}  // namespace meshsim::cli
