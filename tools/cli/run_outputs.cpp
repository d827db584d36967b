#include "tools/cli/run_outputs.hpp"

#include <cinttypes>
#include <cstdio>
#include <optional>

namespace meshsim::cli {
namespace {

using nlohmann::json;

// Fixed formats keep outputs byte-identical across runs.
std::string seconds(const std::optional<engine::SimTime>& time) {
  if (!time) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", time->seconds());
  return buffer;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

json latency_json(const metrics::LatencySummary& s) {
  return json{{"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

}  // namespace

RunFolderWriter::RunFolderWriter(const std::string& folder, metrics::TbtDefinition tbt_definition,
                                 std::ostream& warnings)
    : folder_(folder),
      tbt_definition_(tbt_definition),
      requests_(folder + "/requests.csv"),
      timeseries_(folder + "/timeseries.csv"),
      summary_(folder + "/summary.json"),
      warnings_(warnings) {
  requests_.stream() << "id,arrival_s,prompt_tokens,output_tokens,status,prompt_instance,instance,queueing_s,"
                        "ttft_s,tbt_mean_s,tbt_max_s,e2e_s,pauses,kv_evictions,migrations\n";
  timeseries_.stream() << "start_s,end_s,arrivals,completions,drops,queued,running,instances,prompt_instances,"
                          "token_instances,mixed_instances,starting_instances,active_instances,draining_instances,"
                          "inactive_instances,utilisation,kv_used_fraction,output_tokens,serving_gpus,batch_gpus,"
                          "batch_running,batch_queued,batch_preemptions\n";
}

Status RunFolderWriter::open_status() const {
  for (const AtomicFile* file : {&requests_, &timeseries_, &summary_}) {
    if (!file->is_open()) return Error{file->path() + ": cannot create the output file"};
  }
  return Ok{};
}

void RunFolderWriter::on_request(const metrics::RequestRecord& r) {
  const bool completed = r.status == metrics::RequestStatus::kCompleted;
  auto& out = requests_.stream();
  out << r.id << ',' << seconds(r.arrival) << ',' << r.prompt_tokens << ',' << r.output_tokens << ','
      << metrics::to_string(r.status) << ',';
  if (r.prompt_instance) out << *r.prompt_instance;
  out << ',';
  if (r.instance) out << *r.instance;
  out << ',' << seconds(r.queueing()) << ',' << seconds(r.ttft()) << ','
      << seconds(r.tbt_mean(tbt_definition_)) << ',' << (completed ? seconds(r.tbt_max) : "") << ','
      << seconds(r.e2e()) << ',' << r.pauses << ',' << r.kv_evictions << ',' << r.migrations << '\n';
}

void RunFolderWriter::on_interval(const metrics::TimeseriesRow& row) {
  timeseries_.stream() << seconds(row.start) << ',' << seconds(row.end) << ',' << row.arrivals << ','
                       << row.completions << ',' << row.drops << ',' << row.queued << ',' << row.running
                       << ',' << row.instances << ',' << row.prompt_instances << ',' << row.token_instances << ','
                       << row.mixed_instances << ',' << row.starting_instances << ',' << row.active_instances
                       << ',' << row.draining_instances << ',' << row.inactive_instances << ','
                       << fixed(row.utilisation, 6) << ','
                       << fixed(row.kv_used_fraction, 6) << ',' << row.output_tokens << ','
                       << fixed(row.serving_gpus, 3) << ',' << fixed(row.batch_gpus, 3) << ','
                       << row.batch_running << ',' << row.batch_queued << ',' << row.batch_preemptions << '\n';
}

void RunFolderWriter::on_progress(double fraction, engine::SimTime now) { progress_.update(fraction, now); }

void RunFolderWriter::on_warning(const std::string& message) { warnings_ << "warning: " << message << '\n'; }

Status RunFolderWriter::commit(const nlohmann::ordered_json& summary) {
  progress_.finish();
  // Replace, not throw, on bytes that are not UTF-8 (a trace path given on the command line).
  summary_.stream() << summary.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  for (AtomicFile* file : {&requests_, &timeseries_, &summary_}) {
    if (auto status = file->commit(); !status) return status;
  }
  return Ok{};
}

nlohmann::ordered_json make_summary(const json& resolved_config, std::uint64_t seed,
                                   const std::string& workload_source, const replay::ReplayResult& result,
                                   const metrics::RunMetrics& metrics, const json& scaling, const json& batch) {
  const auto& counts = metrics.counts();
  const double duration = result.end_time.seconds();
  const auto per_second = [duration](double amount) { return duration > 0 ? amount / duration : 0.0; };
  // Headline figures first, the resolved config last (ordered_json keeps this order).
  nlohmann::ordered_json summary;
  summary["meshsim_version"] = MESHSIM_VERSION;
  summary["seed"] = seed;
  summary["workload_source"] = workload_source;
  summary["requests"] = {{"arrived", counts.arrived},
                         {"completed", counts.completed},
                         {"dropped", counts.dropped},
                         {"in_flight", counts.in_flight}};
  summary["slo"] = {{"ttft_target_s", metrics.slo().ttft.seconds()},
                    {"tbt_definition", metrics::kTbtDefinitionNames.name(metrics.slo().tbt_definition)},
                    {"tbt_target_s", metrics.slo().tbt.seconds()},
                    {"ttft_attainment", metrics.ttft_attainment()},
                    {"tbt_attainment", metrics.tbt_attainment()},
                    {"attainment", metrics.slo_attainment()}};
  summary["latency_s"] = {{"ttft", latency_json(metrics.ttft())},
                          {"tbt", latency_json(metrics.tbt())},
                          {"e2e", latency_json(metrics.e2e())},
                          {"queueing", latency_json(metrics.queueing())}};
  summary["throughput"] = {{"completed_per_s", per_second(static_cast<double>(counts.completed))},
                           {"output_tokens_per_s", per_second(static_cast<double>(metrics.output_tokens()))}};
  summary["utilisation"] = result.utilisation;
  summary["cost"] = {{"gpu_hours", result.gpu_hours}, {"usd", result.cost}};
  if (!scaling.is_null()) summary["scaling"] = scaling;
  if (!batch.is_null()) summary["batch"] = batch;
  summary["simulated_time_s"] = duration;
  summary["events"] = result.events;
  summary["config"] = resolved_config;
  return summary;
}

std::string format_summary_table(const nlohmann::ordered_json& s) {
  std::string out;
  char line[256];
  const auto& r = s["requests"];
  std::snprintf(line, sizeof line, "requests    arrived %" PRIu64 "   completed %" PRIu64 "   dropped %" PRIu64
                "   in flight %" PRIu64 "\n",
                r["arrived"].get<std::uint64_t>(), r["completed"].get<std::uint64_t>(),
                r["dropped"].get<std::uint64_t>(), r["in_flight"].get<std::uint64_t>());
  out += line;
  out += "latency (s)        mean       p50       p90       p99       max\n";
  for (const char* name : {"ttft", "tbt", "e2e", "queueing"}) {
    const auto& l = s["latency_s"][name];
    std::snprintf(line, sizeof line, "  %-9s %9.4f %9.4f %9.4f %9.4f %9.4f\n", name, l["mean"].get<double>(),
                  l["p50"].get<double>(), l["p90"].get<double>(), l["p99"].get<double>(), l["max"].get<double>());
    out += line;
  }
  const auto& slo = s["slo"];
  std::snprintf(line, sizeof line, "SLO         %.1f%% met (TTFT <= %.3f s: %.1f%%, TBT <= %.3f s: %.1f%%)\n",
                100.0 * slo["attainment"].get<double>(), slo["ttft_target_s"].get<double>(),
                100.0 * slo["ttft_attainment"].get<double>(), slo["tbt_target_s"].get<double>(),
                100.0 * slo["tbt_attainment"].get<double>());
  out += line;
  std::snprintf(line, sizeof line, "throughput  %.2f req/s, %.1f output tokens/s; utilisation %.1f%%\n",
                s["throughput"]["completed_per_s"].get<double>(), s["throughput"]["output_tokens_per_s"].get<double>(),
                100.0 * s["utilisation"].get<double>());
  out += line;
  std::snprintf(line, sizeof line, "cost        %.2f GPU-hours, $%.2f over %.1f simulated s\n",
                s["cost"]["gpu_hours"].get<double>(), s["cost"]["usd"].get<double>(),
                s["simulated_time_s"].get<double>());
  out += line;
  if (s.contains("scaling")) {
    const auto& k = s["scaling"];
    std::snprintf(line, sizeof line,
                  "scaling     %s: %.1f instances on average, %" PRIu64 " up, %" PRIu64 " down, %" PRIu64
                  " blocked, %" PRIu64 " evacuations\n",
                  k["autoscaler"].get<std::string>().c_str(), k["mean_instances"].get<double>(),
                  k["scale_ups"].get<std::uint64_t>(), k["scale_downs"].get<std::uint64_t>(),
                  k["blocked"].get<std::uint64_t>(), k["evacuations"].get<std::uint64_t>());
    out += line;
  }
  if (s.contains("batch")) {
    const auto& b = s["batch"];
    const auto& jobs = b["jobs"];
    std::snprintf(line, sizeof line,
                  "batch jobs  %" PRIu64 " arrived: %" PRIu64 " completed, %" PRIu64 " running, %" PRIu64
                  " queued, %" PRIu64 " failed; %" PRIu64 " preemptions\n",
                  jobs["arrived"].get<std::uint64_t>(), jobs["completed"].get<std::uint64_t>(),
                  jobs["running"].get<std::uint64_t>(), jobs["queued"].get<std::uint64_t>(),
                  jobs["failed"].get<std::uint64_t>(), b["preemptions"].get<std::uint64_t>());
    out += line;
    const auto& g = b["gpu_hours"];
    std::snprintf(line, sizeof line, "batch GPUs  %.2f GPU-hours held: %.2f useful, %.2f lost, %.2f in progress\n",
                  g["held"].get<double>(), g["useful"].get<double>(), g["lost"].get<double>(),
                  g["in_progress"].get<double>());
    out += line;
  }
  return out;
}

}  // namespace meshsim::cli
