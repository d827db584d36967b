#include "tools/cli/live_metrics.hpp"

#include <sstream>

#include "tools/runs/scheduler_prometheus.hpp"
#include "sim/shared/shared_cluster.hpp"

namespace meshsim::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPublishEvery = std::chrono::milliseconds(500);

}  // namespace

LiveReplayMetrics::LiveReplayMetrics(MetricsServer& server, replay::ReplayObserver& inner)
    : server_(server), inner_(inner), start_(Clock::now()), last_publish_(start_ - kPublishEvery) {}

void LiveReplayMetrics::on_request(const metrics::RequestRecord& record) {
  ++requests_[static_cast<std::size_t>(record.status)];
  inner_.on_request(record);
}

void LiveReplayMetrics::on_interval(const metrics::TimeseriesRow& row) {
  last_row_ = row;
  inner_.on_interval(row);
}

void LiveReplayMetrics::on_progress(double fraction, engine::SimTime now) {
  inner_.on_progress(fraction, now);
  fraction_ = fraction;
  now_ = now;
  if (fraction < 1.0 && Clock::now() - last_publish_ < kPublishEvery) return;  // the end always
  last_publish_ = Clock::now();
  std::string text = progress_text();
  if (run_ != nullptr && run_->shared() != nullptr) {
    std::ostringstream core;
    write_scheduler_metrics(core, run_->shared()->core());
    text += core.str();
  }
  server_.publish(std::move(text));
}

void LiveReplayMetrics::publish_final(const std::string& finished_metrics) {
  server_.publish(progress_text() + finished_metrics);
}

std::string LiveReplayMetrics::progress_text() const {
  std::string text;
  append_metric(text, "meshsim_run_progress", "gauge", "Fraction of the workload read", fraction_);
  append_metric(text, "meshsim_simulated_seconds", "gauge", "Simulated time of the run", now_.seconds());
  append_metric(text, "meshsim_wall_seconds", "gauge", "Wall-clock time since the run started",
                std::chrono::duration<double>(Clock::now() - start_).count());
  text += "# HELP meshsim_requests_total Requests that left the system (or were still in it at the end)\n"
          "# TYPE meshsim_requests_total counter\n";
  for (const auto status : {metrics::RequestStatus::kCompleted, metrics::RequestStatus::kDropped,
                            metrics::RequestStatus::kInFlight}) {
    text += "meshsim_requests_total{status=\"" + std::string(metrics::to_string(status)) + "\"} " +
            std::to_string(requests_[static_cast<std::size_t>(status)]) + '\n';
  }
  if (!last_row_) return text;
  const metrics::TimeseriesRow& r = *last_row_;
  const auto gauge = [&](const char* name, const char* help, double value, const std::string& labels = "") {
    append_metric(text, name, "gauge", help, value, labels);
  };
  gauge("meshsim_queued_requests", "Requests waiting at the end of the last interval", static_cast<double>(r.queued));
  gauge("meshsim_running_requests", "Requests being served at the end of the last interval",
        static_cast<double>(r.running));
  text += "# HELP meshsim_instances Serving instances by state at the end of the last interval\n"
          "# TYPE meshsim_instances gauge\n";
  const std::pair<const char*, std::uint32_t> states[] = {{"starting", r.starting_instances},
                                                          {"active", r.active_instances},
                                                          {"draining", r.draining_instances},
                                                          {"inactive", r.inactive_instances}};
  for (const auto& [state, count] : states) {
    text += "meshsim_instances{state=\"" + std::string(state) + "\"} " + std::to_string(count) + '\n';
  }
  gauge("meshsim_kv_used_fraction", "KV-cache tokens in use over capacity", r.kv_used_fraction);
  gauge("meshsim_roofline_utilisation",
        "Work done at the GPUs' peak FLOPs or bandwidth over serving capacity, last interval", r.roofline_utilisation);
  gauge("meshsim_busy_share", "Share of serving instance-time with an iteration running, last interval", r.busy_share);
  gauge("meshsim_serving_gpus", "GPUs held by serving instances, mean over the last interval", r.serving_gpus);
  gauge("meshsim_batch_gpus", "GPUs held by batch jobs, mean over the last interval", r.batch_gpus);
  if (r.prefix_queried_tokens > 0) {
    gauge("meshsim_prefix_hit_rate", "Prompt tokens found in the prefix caches over those looked up, last interval",
          static_cast<double>(r.prefix_hit_tokens) / static_cast<double>(r.prefix_queried_tokens));
  }
  text += "# HELP meshsim_batch_jobs Batch jobs by state at the end of the last interval\n"
          "# TYPE meshsim_batch_jobs gauge\n"
          "meshsim_batch_jobs{state=\"running\"} " + std::to_string(r.batch_running) + "\n"
          "meshsim_batch_jobs{state=\"queued\"} " + std::to_string(r.batch_queued) + '\n';
  return text;
}

}  // namespace meshsim::cli
