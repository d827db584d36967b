#include "tools/runs/scheduler_prometheus.hpp"

#include <ostream>
#include <array>
#include <charconv>

namespace meshsim::cli {
namespace {

namespace sch = meshsim::scheduler;

// Label values escape backslash, double quote and newline (the exposition format's rule).
std::string escaped(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The shortest text that reads back as the same double ("0.0025", not 0.0025000000000000001).
// Bucket bounds in plain decimals ("0.0001", not "1e-04"), as Prometheus' own clients write them.
std::string number(double value, std::chars_format format = std::chars_format::general) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, format);
  return std::string(buffer.data(), result.ptr);
}

void header(std::ostream& out, const std::string& name, const std::string& type, const std::string& help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

void histogram(std::ostream& out, const std::string& name, const std::string& help, const sch::LatencyHistogram& h) {
  header(out, name, "histogram", help);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < sch::LatencyHistogram::kBoundsMs.size(); ++i) {
    cumulative += h.counts[i];
    out << name << "_bucket{le=\"" << number(sch::LatencyHistogram::kBoundsMs[i], std::chars_format::fixed) << "\"} "
        << cumulative << '\n';
  }
  out << name << "_bucket{le=\"+Inf\"} " << h.count << '\n';
  out << name << "_sum " << number(h.sum_ms) << '\n' << name << "_count " << h.count << '\n';
}

void pool_gauge(std::ostream& out, const std::string& name, const std::string& help,
                const std::map<std::string, sch::PoolStats>& pools,
                const sch::ResourceVector sch::PoolStats::*field) {
  header(out, name, "gauge", help);
  for (const auto& [pool, stats] : pools) {
    const sch::ResourceVector& r = stats.*field;
    const std::string labels = "{pool=\"" + escaped(pool) + "\",resource=\"";
    out << name << labels << "cpu\"} " << number(r.cpu()) << '\n';
    out << name << labels << "memory\"} " << number(r.memory_mb()) << '\n';
    out << name << labels << "gpu\"} " << number(r.gpu()) << '\n';
    for (const auto& [custom, milli] : r.custom_milli_all()) {
      out << name << labels << escaped(custom) << "\"} " << number(static_cast<double>(milli) / 1000.0) << '\n';
    }
  }
}

}  // namespace

void write_scheduler_metrics(std::ostream& out, const sch::Scheduler& scheduler) {
  const auto& metrics = scheduler.metrics();
  header(out, "schedulemesh_preemption_count", "counter", "Preemptions executed, by victim pool and reason.");
  for (const auto& [pool, by_reason] : metrics.preemption_count) {
    for (const auto& [reason, count] : by_reason) {
      out << "schedulemesh_preemption_count{pool=\"" << escaped(pool) << "\",reason=\"" << escaped(reason) << "\"} "
          << count << '\n';
    }
  }
  histogram(out, "schedulemesh_preemption_execution_latency_ms",
            "Wall-clock time spent in the core executing one preemption (state save, cancel, release).",
            metrics.preemption_execution_latency_ms);
  histogram(out, "schedulemesh_task_schedule_latency_ms",
            "Wall-clock time spent in the core placing one submitted task on an agent.",
            metrics.task_schedule_latency_ms);

  const auto stats = summarize(scheduler);
  pool_gauge(out, "schedulemesh_pool_capacity", "Pool quota.", stats.pools, &sch::PoolStats::capacity);
  pool_gauge(out, "schedulemesh_pool_used", "Pool quota held by agents.", stats.pools, &sch::PoolStats::used);
  header(out, "schedulemesh_pool_agents", "gauge", "Agents per pool.");
  for (const auto& [pool, s] : stats.pools) out << "schedulemesh_pool_agents{pool=\"" << escaped(pool) << "\"} " << s.agents << '\n';
  header(out, "schedulemesh_pool_running_tasks", "gauge", "Running tasks per pool.");
  for (const auto& [pool, s] : stats.pools) {
    out << "schedulemesh_pool_running_tasks{pool=\"" << escaped(pool) << "\"} " << s.running_tasks << '\n';
  }
  header(out, "schedulemesh_pg_pool_in_use", "gauge", "Placement groups of a PG pool in use, by kind.");
  for (const auto& [pool, s] : scheduler.pg_pools().stats()) {
    out << "schedulemesh_pg_pool_in_use{pool=\"" << escaped(pool) << "\",kind=\"reserved\"} " << s.reserved_in_use << '\n';
    out << "schedulemesh_pg_pool_in_use{pool=\"" << escaped(pool) << "\",kind=\"dynamic\"} " << s.dynamic_in_use << '\n';
  }
  header(out, "schedulemesh_pg_pool_reuse_hits", "counter", "Freed placement groups handed to a new task.");
  for (const auto& [pool, s] : scheduler.pg_pools().stats()) {
    out << "schedulemesh_pg_pool_reuse_hits{pool=\"" << escaped(pool) << "\"} " << s.reuse_hits << '\n';
  }
}

void write_replay_metrics(std::ostream& out, const nlohmann::ordered_json& summary,
                          const sch::Scheduler* scheduler) {
  header(out, "meshsim_requests_total", "counter", "Requests of the run, by how they ended.");
  for (const char* status : {"arrived", "completed", "dropped", "in_flight"}) {
    out << "meshsim_requests_total{status=\"" << status << "\"} " << summary["requests"][status].get<std::uint64_t>()
        << '\n';
  }
  header(out, "meshsim_slo_attainment", "gauge", "Share of requests meeting both SLOs (dropped ones miss).");
  out << "meshsim_slo_attainment " << number(summary["slo"]["attainment"].get<double>()) << '\n';
  header(out, "meshsim_latency_seconds", "gauge", "Request latency quantiles, by kind.");
  for (const char* kind : {"ttft", "tbt", "e2e", "queueing"}) {
    // Prometheus labels a quantile by its fraction ("0.5"), as its summaries do.
    for (const auto& [key, label] : {std::pair{"p50", "0.5"}, std::pair{"p90", "0.9"}, std::pair{"p99", "0.99"}}) {
      if (summary["latency_s"][kind][key].is_null()) continue;  // no request measured
      out << "meshsim_latency_seconds{kind=\"" << kind << "\",quantile=\"" << label << "\"} "
          << number(summary["latency_s"][kind][key].get<double>()) << '\n';
    }
  }
  if (summary.contains("classes")) {
    header(out, "meshsim_class_requests_total", "counter", "Requests of each class of service, by how they ended.");
    for (const auto& c : summary["classes"]) {
      for (const char* status : {"arrived", "completed", "dropped", "in_flight"}) {
        out << "meshsim_class_requests_total{class=\"" << escaped(c["name"].get<std::string>()) << "\",status=\""
            << status << "\"} " << c["requests"][status].get<std::uint64_t>() << '\n';
      }
    }
    header(out, "meshsim_class_slo_attainment", "gauge", "Share of a class's requests meeting its own SLO.");
    for (const auto& c : summary["classes"]) {
      out << "meshsim_class_slo_attainment{class=\"" << escaped(c["name"].get<std::string>()) << "\"} "
          << number(c["slo"]["attainment"].get<double>()) << '\n';
    }
    header(out, "meshsim_class_goodput_per_second", "gauge", "A class's requests meeting its SLO per second.");
    for (const auto& c : summary["classes"]) {
      out << "meshsim_class_goodput_per_second{class=\"" << escaped(c["name"].get<std::string>()) << "\"} "
          << number(c["goodput_per_s"].get<double>()) << '\n';
    }
  }
  header(out, "meshsim_serving_gpu_hours", "gauge", "GPU-hours held by serving instances.");
  out << "meshsim_serving_gpu_hours " << number(summary["cost"]["gpu_hours"].get<double>()) << '\n';
  if (summary.contains("prefix_cache")) {
    header(out, "meshsim_prefix_cache_tokens_total", "counter",
           "Prompt tokens looked up in each instance's prefix cache (queried) and found there (hit).");
    for (const auto& e : summary["prefix_cache"]["instances"]) {
      const std::string instance = std::to_string(e["instance"].get<std::uint64_t>());
      for (const char* kind : {"queried", "hit"}) {
        out << "meshsim_prefix_cache_tokens_total{instance=\"" << instance << "\",kind=\"" << kind << "\"} "
            << e[std::string(kind) + "_tokens"].get<std::uint64_t>() << '\n';
      }
    }
  }
  if (summary.contains("scaling")) {
    header(out, "meshsim_scaling_actions_total", "counter", "Scaling actions, by kind.");
    for (const char* kind : {"scale_ups", "scale_downs", "blocked", "evacuations"}) {
      out << "meshsim_scaling_actions_total{kind=\"" << kind << "\"} "
          << summary["scaling"][kind].get<std::uint64_t>() << '\n';
    }
  }
  if (summary.contains("batch")) {
    const auto& batch = summary["batch"];
    header(out, "meshsim_batch_jobs", "gauge", "Batch jobs at the end of the run, by state.");
    for (const char* state : {"arrived", "completed", "running", "stopping", "queued", "failed", "not_arrived"}) {
      out << "meshsim_batch_jobs{state=\"" << state << "\"} " << batch["jobs"][state].get<std::uint64_t>() << '\n';
    }
    header(out, "meshsim_batch_hung_agents_total", "counter",
           "Preemptions whose batch agent never answered the cancel and was killed at cancel_timeout.");
    out << "meshsim_batch_hung_agents_total " << batch["hung_agents"].get<std::uint64_t>() << '\n';
    header(out, "meshsim_batch_preemptions_total", "counter",
           "Batch jobs preempted, by the preemptor's class (serving: a serving instance) and the victim's.");
    for (const auto& [preemptor, victims] : batch["preempted_by"].items()) {
      for (const auto& [victim, n] : victims.items()) {
        out << "meshsim_batch_preemptions_total{preemptor=\"" << escaped(preemptor) << "\",victim=\""
            << escaped(victim) << "\"} " << n.get<std::uint64_t>() << '\n';
      }
    }
    header(out, "meshsim_batch_gpu_hours", "gauge", "Batch GPU-hours held, kept, lost to preemption, in progress.");
    for (const char* kind : {"held", "useful", "lost", "in_progress"}) {
      out << "meshsim_batch_gpu_hours{kind=\"" << kind << "\"} " << number(batch["gpu_hours"][kind].get<double>())
          << '\n';
    }
  }
  if (scheduler != nullptr) write_scheduler_metrics(out, *scheduler);
}

}  // namespace meshsim::cli
