#include "tools/runs/run_outputs.hpp"

#include <cinttypes>
#include <cstdio>

#include "sim/engine/number_text.hpp"
#include "tools/runs/class_summary.hpp"
#include "tools/runs/run_columns.hpp"
#include "sim/shared/shared_cluster.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;

// Figures over no request are null, not 0 (a run whose requests all dropped or were still
// in flight had no latency to report).
json latency_json(const metrics::LatencySummary& s) {
  const auto figure = [&](double value) { return s.count > 0 ? json(value) : json(nullptr); };
  return json{{"count", s.count},           {"mean", figure(s.mean)}, {"p50", figure(s.p50)},
              {"p90", figure(s.p90)},       {"p99", figure(s.p99)},   {"max", figure(s.max)}};
}

}  // namespace

RunFolderWriter::RunFolderWriter(const std::string& folder, const replay::ReplayOptions& replay,
                                 std::ostream& warnings, bool progress)
    : folder_(folder),
      tbt_definition_(replay.slo.tbt_definition),
      requests_(folder + "/requests.csv"),
      timeseries_(folder + "/timeseries.csv"),
      summary_(folder + "/summary.json"),
      progress_(progress),
      warnings_(warnings) {
  for (const auto& c : replay.classes) class_names_.push_back(c.name);
  // With classes, each request's class by name, in the last column.
  write_csv_names(requests_.stream(), kRequestColumns);
  requests_.stream() << (class_names_.empty() ? "\n" : ",class\n");
  write_csv_header(timeseries_.stream(), kTimeseriesColumns);
}

Status RunFolderWriter::open_status() const {
  for (const AtomicFile* file : {&requests_, &timeseries_, &summary_}) {
    if (!file->is_open()) return Error{file->path() + ": cannot create the output file"};
  }
  return Ok{};
}

void RunFolderWriter::on_request(const metrics::RequestRecord& record) {
  write_csv_cells(requests_.stream(), kRequestColumns, record, tbt_definition_);
  if (!class_names_.empty()) requests_.stream() << ',' << class_names_.at(record.service_class);
  requests_.stream() << '\n';
}

void RunFolderWriter::on_interval(const metrics::TimeseriesRow& row) {
  write_csv_row(timeseries_.stream(), kTimeseriesColumns, row);
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

namespace {

// Prompt tokens looked up in and found in the instances' prefix caches: in all, and per
// instance (by id, removed ones included).
// The host KV tier's counts over the run (vLLM's CPU offloading), its hits as a share of
// the prompt tokens looked up.
nlohmann::ordered_json host_tier_json(const cluster::HostKvCounts& host, std::uint64_t queried) {
  nlohmann::ordered_json out;
  out["hit_tokens"] = host.hit_tokens;
  out["hit_rate"] = queried > 0 ? nlohmann::ordered_json(static_cast<double>(host.hit_tokens) / static_cast<double>(queried))
                                : nlohmann::ordered_json(nullptr);
  out["loads"] = host.loads;
  out["loads_deferred"] = host.loads_deferred;
  out["loaded_bytes"] = host.loaded_bytes;
  out["load_s"] = host.load_time.seconds();
  out["stored_bytes"] = host.stored_bytes;
  out["store_s"] = host.store_time.seconds();
  return out;
}

nlohmann::ordered_json prefix_cache_json(const std::vector<cluster::ServingSystem::PrefixCacheCounts>& instances) {
  const auto entry = [](std::uint64_t queried, std::uint64_t hit) {
    nlohmann::ordered_json e;
    e["queried_tokens"] = queried;
    e["hit_tokens"] = hit;
    e["hit_rate"] = queried > 0 ? nlohmann::ordered_json(static_cast<double>(hit) / static_cast<double>(queried))
                                : nlohmann::ordered_json(nullptr);
    return e;
  };
  std::uint64_t queried = 0, hit = 0;
  nlohmann::ordered_json per_instance = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < instances.size(); ++i) {
    queried += instances[i].queried_tokens;
    hit += instances[i].hit_tokens;
    nlohmann::ordered_json e{{"instance", i}};
    e.update(entry(instances[i].queried_tokens, instances[i].hit_tokens));
    per_instance.push_back(e);
  }
  nlohmann::ordered_json out = entry(queried, hit);
  out["instances"] = per_instance;
  cluster::HostKvCounts host;
  for (const auto& instance : instances) host += instance.host;
  if (host.loads > 0 || host.stored_bytes > 0) {
    out["host"] = host_tier_json(host, queried);
    for (std::size_t i = 0; i < instances.size(); ++i) out["instances"][i]["host_hit_tokens"] = instances[i].host.hit_tokens;
  }
  return out;
}

}  // namespace

// The dropped requests by reason (DropReason), every reason named.
nlohmann::ordered_json dropped_for_json(const metrics::RequestCounts& counts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto reason : {metrics::DropReason::kOverContext, metrics::DropReason::kOverKvCapacity,
                            metrics::DropReason::kTimedOut, metrics::DropReason::kQueueFull}) {
    out[std::string(metrics::kDropReasonNames.name(reason))] = counts.dropped_by(reason);
  }
  return out;
}

// Why requests were dropped, when any were: the share over the context limit first (a
// what-if a longer-context deployment answers), then the rest.
std::string dropped_text(const nlohmann::ordered_json& s) {
  const auto& r = s["requests"];
  const auto arrived = r["arrived"].get<std::uint64_t>();
  if (r["dropped"].get<std::uint64_t>() == 0 || arrived == 0) return "";
  const auto& by = r["dropped_for"];
  const auto share = [&](const char* reason) {
    const auto n = by[reason].get<std::uint64_t>();
    return std::to_string(n) + " (" + percent_text(static_cast<double>(n) / static_cast<double>(arrived), 1) + ")";
  };
  std::string out = "dropped    ";
  std::string limit = "the context limit";
  if (s.contains("deployment") && !s["deployment"]["context_limit_tokens"].is_null()) {
    limit += " of " + std::to_string(s["deployment"]["context_limit_tokens"].get<std::uint64_t>()) + " tokens";
  }
  std::string parts;
  const auto part = [&](const char* reason, const std::string& words) {
    if (by[reason].get<std::uint64_t>() == 0) return;
    parts += (parts.empty() ? " " : "; ") + share(reason) + " " + words;
  };
  part("over_context", "longer than " + limit);
  part("over_kv_capacity", "too long for any instance's KV cache");
  part("timed_out", "past the client's timeout");
  part("queue_full", "at a full system (serving.max_requests_in_system) or queue");
  return parts.empty() ? "" : out + parts + "\n";
}

nlohmann::ordered_json make_summary(const json& resolved_config, std::uint64_t seed,
                                   const std::string& workload_source, const replay::ReplayResult& result,
                                   const metrics::RunMetrics& metrics, const json& scaling, const json& batch,
                                   const json& roofline, const nlohmann::ordered_json& deployment) {
  const auto& counts = metrics.counts();
  const double duration = result.end_time.seconds();
  // Serving rates are over the serving workload's span: a shared cluster's run goes on
  // after it (its batch jobs run to the scenario's end).
  const double served = result.workload_served_at.value_or(result.end_time).seconds();
  const auto per_second = [served](double amount) { return served > 0 ? amount / served : 0.0; };
  // Headline figures first, the resolved config last (ordered_json keeps this order).
  nlohmann::ordered_json summary;
  summary["meshsim_version"] = MESHSIM_VERSION;
  summary["seed"] = seed;
  summary["workload_source"] = workload_source;
  summary["requests"] = {{"arrived", counts.arrived},
                         {"completed", counts.completed},
                         {"dropped", counts.dropped},
                         {"in_flight", counts.in_flight},
                         {"dropped_for", dropped_for_json(counts)}};
  summary["slo"] = {{"ttft_target_s", metrics.slo().ttft.seconds()},
                    {"ttft_target_s_per_prompt_token", metrics.slo().ttft_per_prompt_token_s},
                    {"tbt_definition", metrics::kTbtDefinitionNames.name(metrics.slo().tbt_definition)},
                    {"tbt_target_s", metrics.slo().tbt.seconds()},
                    {"ttft_attainment", metrics.ttft_attainment()},
                    {"tbt_attainment", metrics.tbt_attainment()},
                    {"attainment", metrics.slo_attainment()}};
  summary["latency_s"] = {{"ttft", latency_json(metrics.ttft())},
                          {"tbt", latency_json(metrics.tbt())},
                          {"e2e", latency_json(metrics.e2e())},
                          {"queueing", latency_json(metrics.queueing())}};
  // Goodput: the requests meeting the SLO per second, beside the load offered (arrivals).
  summary["throughput"] = {{"completed_per_s", per_second(static_cast<double>(counts.completed))},
                           {"goodput_per_s", per_second(static_cast<double>(metrics.slo_met()))},
                           {"offered_per_s", metrics.offered_per_s()},
                           {"output_tokens_per_s", per_second(static_cast<double>(metrics.output_tokens()))}};
  // Two figures, never one "utilisation" (cluster::utilisation_between): a loaded cluster
  // of small decode batches is busy all the time yet far from its GPUs' roofline.
  summary["roofline_utilisation"] = result.utilisation.roofline;
  summary["busy_share"] = result.utilisation.busy;
  const metrics::OverloadVerdict& o = result.overload;
  summary["overload"] = {{"overloaded", o.overloaded},          {"from_s", o.from_s},
                         {"to_s", o.to_s},                      {"arrival_rate", o.arrival_rate},
                         {"departure_rate", o.departure_rate},  {"backlog_before", o.backlog_before},
                         {"backlog_after", o.backlog_after},
                         {"waiting_after", o.waiting_after}};
  if (auto classes = classes_summary(resolved_config, metrics, served); !classes.is_null()) {
    summary["classes"] = std::move(classes);
  }
  summary["cost"] = {{"gpu_hours", result.gpu_hours}, {"usd", result.cost}};
  if (!deployment.is_null()) summary["deployment"] = deployment;
  if (!result.prefix_cache.empty()) summary["prefix_cache"] = prefix_cache_json(result.prefix_cache);
  if (!scaling.is_null()) summary["scaling"] = scaling;
  if (!batch.is_null()) summary["batch"] = batch;
  if (!roofline.is_null()) summary["roofline_factors"] = roofline;  // borrowed (see the note)
  summary["simulated_time_s"] = duration;
  if (served < duration) summary["serving_ended_s"] = served;
  summary["events"] = result.events;
  summary["config"] = resolved_config;
  return summary;
}

namespace {

// The batch jobs' lines of the summary table: counts, who preempted whom, GPU-hours.
std::string format_batch_lines(const nlohmann::ordered_json& b, double simulated_s) {
  std::string out;
  char line[512];
  const auto& jobs = b["jobs"];
  std::snprintf(line, sizeof line,
                "batch jobs  %" PRIu64 " arrived: %" PRIu64 " completed, %" PRIu64 " running, %" PRIu64
                " queued, %" PRIu64 " failed; %" PRIu64 " preemptions\n",
                jobs["arrived"].get<std::uint64_t>(), jobs["completed"].get<std::uint64_t>(),
                jobs["running"].get<std::uint64_t>(), jobs["queued"].get<std::uint64_t>(),
                jobs["failed"].get<std::uint64_t>(), b["preemptions"].get<std::uint64_t>());
  out += line;
  if (const auto missing = jobs["not_arrived"].get<std::uint64_t>(); missing > 0) {
    std::snprintf(line, sizeof line,
                  "NOTE        %" PRIu64 " of %" PRIu64 " batch jobs had not arrived when the run ended at %.0f s "
                  "(it ends with the serving workload unless run.until_s sets its end)\n",
                  missing, jobs["total"].get<std::uint64_t>(), simulated_s);
    out += line;
  }
  if (!b["preempted_by"].empty()) {
    std::string who;
    for (const auto& [preemptor, victims] : b["preempted_by"].items()) {
      who += (who.empty() ? "" : "; ") + preemptor + " preempted";
      std::string list;
      for (const auto& [victim, n] : victims.items()) {
        list += (list.empty() ? " " : ", ") + victim + " " + std::to_string(n.get<std::uint64_t>());
      }
      who += list;
    }
    out += "preempted   " + who + "\n";
  }
  const auto& g = b["gpu_hours"];
  std::snprintf(line, sizeof line, "batch GPUs  %.2f GPU-hours held: %.2f useful, %.2f lost, %.2f in progress\n",
                g["held"].get<double>(), g["useful"].get<double>(), g["lost"].get<double>(),
                g["in_progress"].get<double>());
  out += line;
  return out;
}

}  // namespace

std::string format_summary_table(const nlohmann::ordered_json& s) {
  std::string out;
  char line[512];
  const auto& r = s["requests"];
  std::snprintf(line, sizeof line, "requests    arrived %" PRIu64 "   completed %" PRIu64 "   dropped %" PRIu64
                "   in flight %" PRIu64 "\n",
                r["arrived"].get<std::uint64_t>(), r["completed"].get<std::uint64_t>(),
                r["dropped"].get<std::uint64_t>(), r["in_flight"].get<std::uint64_t>());
  out += line;
  out += dropped_text(s);
  out += "latency (s)        mean       p50       p90       p99       max\n";
  for (const char* name : {"ttft", "tbt", "e2e", "queueing"}) {
    const auto& l = s["latency_s"][name];
    std::snprintf(line, sizeof line, "  %-9s", name);
    out += line;
    for (const char* figure : {"mean", "p50", "p90", "p99", "max"}) {
      if (l[figure].is_null()) {
        out += "         -";  // no request to measure
      } else {
        std::snprintf(line, sizeof line, " %9.4f", l[figure].get<double>());
        out += line;
      }
    }
    out += '\n';
  }
  const auto& slo = s["slo"];
  const double per_token_ms = slo["ttft_target_s_per_prompt_token"].get<double>() * 1e3;
  const std::string scaled = per_token_ms > 0 ? " + " + number_text(per_token_ms) + " ms per prompt token" : "";
  if (s.contains("classes")) {  // each request judged by its class's targets, listed below
    std::snprintf(line, sizeof line, "SLO         %s met (TTFT: %s, TBT: %s), each request by its class's targets\n",
                  percent_text(slo["attainment"].get<double>(), 1).c_str(),
                  percent_text(slo["ttft_attainment"].get<double>(), 1).c_str(),
                  percent_text(slo["tbt_attainment"].get<double>(), 1).c_str());
  } else {
    std::snprintf(line, sizeof line, "SLO         %s met (TTFT <= %.3f s%s: %s, TBT <= %.3f s: %s)\n",
                  percent_text(slo["attainment"].get<double>(), 1).c_str(), slo["ttft_target_s"].get<double>(),
                  scaled.c_str(), percent_text(slo["ttft_attainment"].get<double>(), 1).c_str(),
                  slo["tbt_target_s"].get<double>(), percent_text(slo["tbt_attainment"].get<double>(), 1).c_str());
  }
  out += line;
  out += format_classes_table(s);
  std::snprintf(line, sizeof line, "throughput  %.2f req/s, %.1f output tokens/s; goodput %.2f req/s (SLO met) of %.2f req/s offered\n",
                s["throughput"]["completed_per_s"].get<double>(), s["throughput"]["output_tokens_per_s"].get<double>(),
                s["throughput"]["goodput_per_s"].get<double>(), s["throughput"]["offered_per_s"].get<double>());
  out += line;
  std::snprintf(line, sizeof line, "GPUs        busy %s of serving time, at %s of their roofline (FLOPs or bandwidth)\n",
                percent_text(s["busy_share"].get<double>(), 1).c_str(),
                percent_text(s["roofline_utilisation"].get<double>(), 1).c_str());
  out += line;
  if (s.contains("prefix_cache") && s["prefix_cache"].contains("host")) {
    const auto& p = s["prefix_cache"];
    const auto share = [](const nlohmann::ordered_json& rate) { return rate.is_null() ? 0.0 : rate.get<double>(); };
    std::snprintf(line, sizeof line,
                  "KV cache    %s of prompt tokens hit on the GPUs, %s loaded from host memory (%" PRIu64
                  " loads, %" PRIu64 " put off)\n",
                  percent_text(share(p["hit_rate"]), 1).c_str(), percent_text(share(p["host"]["hit_rate"]), 1).c_str(),
                  p["host"]["loads"].get<std::uint64_t>(), p["host"]["loads_deferred"].get<std::uint64_t>());
    out += line;
  }
  // GPU-hours count the GPUs instances hold; dollars pay for whole servers, idle GPUs
  // and starting servers included: the two part where instances leave GPUs unused.
  std::snprintf(line, sizeof line, "cost        %.2f GPU-hours held by instances; $%.2f for their servers, over %.1f simulated s\n",
                s["cost"]["gpu_hours"].get<double>(), s["cost"]["usd"].get<double>(),
                s["simulated_time_s"].get<double>());
  out += line;
  // Only a workload that ended well before the run is worth a line (a trace's last
  // requests always leave a little before a round end time).
  if (s.contains("serving_ended_s") && s["serving_ended_s"].get<double>() < 0.9 * s["simulated_time_s"].get<double>()) {
    std::snprintf(line, sizeof line,
                  "NOTE        the serving workload ended at %.0f s, the run at %.0f s: serving rates are over the "
                  "workload's %.0f s, costs and batch jobs over the run\n",
                  s["serving_ended_s"].get<double>(), s["simulated_time_s"].get<double>(),
                  s["serving_ended_s"].get<double>());
    out += line;
  }
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
  if (s.contains("batch")) out += format_batch_lines(s["batch"], s["simulated_time_s"].get<double>());
  if (const auto& o = s["overload"]; o["overloaded"].get<bool>()) {
    std::snprintf(line, sizeof line,
                  "WARNING     overloaded: from %.0f s to %.0f s, %.2f requests/s arrived and %.2f/s left; the "
                  "backlog went from %" PRIu64 " to %" PRIu64 " requests, %" PRIu64 " of them waiting: the "
                  "deployment cannot serve this load (add instances or an --autoscaler, or lower --rate-scale)\n",
                  o["from_s"].get<double>(), o["to_s"].get<double>(), o["arrival_rate"].get<double>(),
                  o["departure_rate"].get<double>(), o["backlog_before"].get<std::uint64_t>(),
                  o["backlog_after"].get<std::uint64_t>(), o["waiting_after"].get<std::uint64_t>());
    out += line;
  }
  return out;
}

json scaling_summary(const run::ScenarioRun& run, const replay::ReplayResult& result) {
  const autoscale::ScalingHarness* scaling = run.scaling();
  if (scaling == nullptr) return nullptr;
  const auto& counts = scaling->manager().view().counts();
  const double hours = result.end_time.seconds() / 3600.0;
  return json{{"autoscaler", scaling->policy()->name()},
              {"decisions", scaling->decisions()},
              {"mean_instances", hours > 0 ? result.instance_hours / hours : 0.0},
              {"scale_ups", counts.scale_ups},
              {"scale_downs", counts.scale_downs},
              {"blocked", counts.blocked},
              {"instances_removed", counts.instances_removed},
              {"servers_removed", counts.servers_removed},
              {"evacuations", counts.evacuations},
              {"instance_migrations", counts.migrations},
              {"migrations", run.replay().metrics().migrations()}};
}

json batch_summary(const run::ScenarioRun& run, const replay::ReplayResult& result) {
  const shared::SharedCluster* shared = run.shared();
  if (shared == nullptr) return nullptr;
  const auto& batch = shared->batch();
  const auto& c = batch.counts();
  const auto stats = shared->core().get_preemption_stats();
  const double held = batch.held_gpu_s(result.end_time) / 3600.0;
  const double useful = c.useful_gpu_s / 3600.0;
  const double lost = c.lost_gpu_s / 3600.0;
  json reasons = json::object();
  for (const auto& [pool, by_reason] : shared->core().metrics().preemption_count) {
    for (const auto& [reason, count] : by_reason) reasons[reason] = reasons.value(reason, std::uint64_t{0}) + count;
  }
  // preemptor's class -> victim's class -> preemptions ("serving" for serving instances).
  json preempted_by = json::object();
  for (const auto& [pair, n] : batch.preemptions_by_class()) preempted_by[pair.first][pair.second] = n;
  return json{{"jobs",
               {{"total", batch.jobs_total()},
                {"not_arrived", batch.jobs_total() - c.arrived},
                {"arrived", c.arrived},
                {"completed", c.completed},
                {"running", c.running},
                {"stopping", c.stopping},
                {"queued", c.queued},
                {"failed", c.failed}}},
              {"starts", c.starts},
              {"preemptions", c.preemptions},
              {"requeues", c.requeues},
              {"hung_agents", c.hung_agents},
              {"preemptions_by_reason", reasons},
              {"preempted_by", preempted_by},
              {"core_preemptions", stats.total_preemptions},
              {"gpu_hours",
               {{"held", held}, {"useful", useful}, {"lost", lost}, {"in_progress", held - useful - lost}}},
              // Of the batch work that ended (finished, checkpointed or preempted), the
              // share lost to preemption.
              {"lost_share", useful + lost > 0 ? lost / (useful + lost) : 0.0},
              {"nodes", shared->config().nodes.size()}};
}

}  // namespace meshsim::cli
