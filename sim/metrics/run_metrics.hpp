#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/metrics/quantile_sketch.hpp"
#include "sim/metrics/request_record.hpp"

namespace meshsim::metrics {

// Per-request service-level targets. A request meets its SLO when it completes with
// TTFT <= ttft and mean TBT <= tbt.
struct SloTargets {
  SimTime ttft = SimTime::from_ms(1000);
  // Added to `ttft` per prompt token (a target that scales with prompt length, as
  // DistServe-style studies set it); 0: absolute. The environment's backlog features and
  // the evaluation's count of first tokens still awaited use `ttft` alone.
  double ttft_per_prompt_token_s = 0.0;
  // A request's TTFT target.
  SimTime ttft_for(std::uint32_t prompt_tokens) const {
    return ttft + SimTime::from_seconds(ttft_per_prompt_token_s * prompt_tokens);
  }
  SimTime tbt = SimTime::from_ms(100);
  TbtDefinition tbt_definition = TbtDefinition::kMeanGap;
};

// The targets each request is judged by: its class of service's, or the run's for every
// request of a run without classes (RequestRecord::service_class indexes `classes`).
struct SloBook {
  SloTargets run;
  std::vector<SloTargets> classes;
  const SloTargets& of(std::uint8_t service_class) const {
    return service_class < classes.size() ? classes[service_class] : run;
  }
  const SloTargets& of(const RequestRecord& record) const { return of(record.service_class); }
};

// How a request that left the system did against the targets: a dropped one misses both.
struct SloVerdict {
  bool ttft_ok = false, tbt_ok = false;
  bool met() const { return ttft_ok && tbt_ok; }
};
SloVerdict judge(const RequestRecord& record, const SloTargets& slo);

// Percentiles of one latency, in seconds.
struct LatencySummary {
  std::uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// The request counts of a run. arrived == completed + dropped + in_flight, always.
struct RequestCounts {
  std::uint64_t arrived = 0;
  std::uint64_t completed = 0;
  std::uint64_t dropped = 0;
  std::uint64_t in_flight = 0;
  // The dropped, by DropReason (kNone's: dropped for no reason given).
  std::array<std::uint64_t, 5> dropped_for{};
  std::uint64_t dropped_by(DropReason reason) const { return dropped_for[static_cast<std::size_t>(reason)]; }
  // The requests SLO attainment judges: those that left the system, less those refused
  // for their length (slo_judges).
  std::uint64_t judged() const { return completed + dropped - dropped_by(DropReason::kOverContext); }
};

// One row of timeseries.csv: the interval [start, end) and the state at its end.
struct TimeseriesRow {
  SimTime start;
  SimTime end;
  std::uint64_t arrivals = 0;     // in the interval
  std::uint64_t completions = 0;  // in the interval
  std::uint64_t drops = 0;        // in the interval
  std::uint64_t queued = 0;       // waiting at the end
  std::uint64_t running = 0;      // being served at the end
  std::uint32_t instances = 0;    // instances that exist at the end
  std::uint32_t prompt_instances = 0, token_instances = 0, mixed_instances = 0;
  std::uint32_t starting_instances = 0, active_instances = 0, draining_instances = 0, inactive_instances = 0;
  double kv_used_fraction = 0.0;  // KV-cache tokens in use / capacity, at the end
  // Over the interval (cluster::utilisation_between): work at the GPUs' peak FLOPs or
  // bandwidth over serving capacity, and the share of serving instance-time busy.
  double roofline_utilisation = 0.0;
  double busy_share = 0.0;
  std::uint64_t output_tokens = 0;  // generated in the interval (by completed requests)
  double serving_gpus = 0.0;        // GPUs held by instances, mean over the interval
  // A shared cluster's batch jobs (zero without one): GPUs held (mean over the interval),
  // jobs running and queued at the end, preemptions in the interval.
  double batch_gpus = 0.0;
  std::uint64_t batch_running = 0, batch_queued = 0, batch_preemptions = 0;
  // Prefix caching in the interval (zero without it): prompt tokens looked up and found
  // cached, over all instances, and the lowest and highest hit rate of an instance that
  // looked tokens up (none when none did).
  std::uint64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  std::optional<double> prefix_hit_rate_min, prefix_hit_rate_max;

  bool operator==(const TimeseriesRow&) const = default;
};

// One class of service's share of a run (RunMetrics::classes): its counts add up as the
// run's do, and its attainment judges its requests by its own SLO.
struct ClassFigures {
  SloTargets slo;
  RequestCounts counts;
  std::uint64_t ttft_met = 0, tbt_met = 0, slo_met = 0;
  std::uint64_t output_tokens = 0;
  QuantileSketch ttft, tbt;
  double attainment() const { return fraction(slo_met); }
  double ttft_attainment() const { return fraction(ttft_met); }
  double tbt_attainment() const { return fraction(tbt_met); }

 private:
  double fraction(std::uint64_t met) const {
    const std::uint64_t judged = counts.judged();
    return judged ? static_cast<double>(met) / static_cast<double>(judged) : 0.0;
  }
};

// Accumulates request outcomes into counts, latency sketches and SLO attainment, in
// constant memory. With classes of service (one SLO each, by RequestRecord::service_class)
// each request is judged by its class's SLO, and each class keeps its own figures.
class RunMetrics {
 public:
  explicit RunMetrics(SloTargets slo, const std::vector<SloTargets>& class_slos = {});

  void on_arrival(SimTime now, std::uint8_t service_class = 0);
  // A request leaving the system, completed or dropped.
  void on_finished(const RequestRecord& record);
  // Called once at the end for the requests still in the system; each class's are its
  // arrivals not yet finished, and they must add up to `in_flight`.
  void set_in_flight(std::uint64_t in_flight);
  // Per class of service, in the scenario's order (empty without classes).
  const std::vector<ClassFigures>& classes() const { return classes_; }

  const RequestCounts& counts() const { return counts_; }
  const SloTargets& slo() const { return slo_; }
  LatencySummary ttft() const { return summarize(ttft_); }
  LatencySummary tbt() const { return summarize(tbt_); }
  LatencySummary e2e() const { return summarize(e2e_); }
  LatencySummary queueing() const { return summarize(queueing_); }
  // Fractions of the requests judged (RequestCounts::judged: those that left the system,
  // less those refused for their length) meeting each target, and both: a request dropped
  // otherwise is a miss. Requests still in flight when a run stops at `until` are not
  // counted (their outcome is unknown).
  double ttft_attainment() const { return fraction(ttft_met_); }
  double tbt_attainment() const { return fraction(tbt_met_); }
  double slo_attainment() const { return fraction(slo_met_); }
  std::uint64_t slo_met() const { return slo_met_; }
  std::uint64_t output_tokens() const { return output_tokens_; }
  // The load offered: arrivals per second from the start to the last arrival (0 before
  // the first), whatever the run's tail of draining work.
  // Seconds from the start to the last arrival: the time base of offered_per_s (and of
  // capacity's goodput, so that the two compare).
  double arrival_span_s() const { return last_arrival_.seconds(); }
  double offered_per_s() const {
    return last_arrival_ > SimTime::zero() ? static_cast<double>(counts_.arrived) / arrival_span_s() : 0.0;
  }
  std::uint64_t prompt_tokens() const { return prompt_tokens_; }
  // Moves off evacuated instances, over completed requests.
  std::uint64_t migrations() const { return migrations_; }

 private:
  static LatencySummary summarize(const QuantileSketch& sketch);
  double fraction(std::uint64_t met) const {
    const std::uint64_t judged = counts_.judged();
    return judged ? static_cast<double>(met) / static_cast<double>(judged) : 0.0;
  }

  SloTargets slo_;
  std::vector<ClassFigures> classes_;
  RequestCounts counts_;
  QuantileSketch ttft_, tbt_, e2e_, queueing_;
  std::uint64_t ttft_met_ = 0, tbt_met_ = 0, slo_met_ = 0;
  std::uint64_t output_tokens_ = 0, prompt_tokens_ = 0;
  std::uint64_t migrations_ = 0;
  SimTime last_arrival_;
};

}  // namespace meshsim::metrics
