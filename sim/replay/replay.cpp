#include "sim/replay/replay.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::replay {

Replay::Replay(engine::Simulation& sim, traces::RequestSource& source, const ServingFactory& serving,
               ReplayOptions options, ReplayObserver& observer)
    : sim_(sim),
      source_(source),
      cluster_(serving(sim, *this)),
      options_(options),
      observer_(observer),
      metrics_(options.slo, metrics::slos_of(options.classes)),
      sample_timer_(sim, *this, engine::EventPayload{kSample, 0}),
      interval_(options.timeseries_interval),
      rows_until_coarser_(options.timeseries_row_budget),
      next_allowance_(std::max<std::uint64_t>(1, options.timeseries_row_budget / 2)) {
  MESHSIM_CHECK(options_.timeseries_interval > SimTime::zero(), "timeseries interval must be positive");
  MESHSIM_CHECK(options_.timeseries_row_budget > 0, "the time series needs a row budget");
}

void Replay::read_next_arrival() {
  auto next = source_.next();
  if (!next) {
    source_error_ = next.error();
    source_done_ = true;
    sim_.stop();
    return;
  }
  if (!next->has_value()) {
    source_done_ = true;
    note_if_done();
    return;
  }
  next_ = std::move(**next);
  // Arrival offsets are relative to the replay's start; one read after a held request was
  // sent may be due already.
  sim_.schedule_at(std::max(next_->arrival, sim_.now()), *this, engine::EventPayload{kArrival, 0});
}

void Replay::on_event(const engine::EventPayload& payload) {
  if (payload.a == kSample) {
    sample();
    return;
  }
  release_armed_ = false;
  if (options_.max_concurrency && cluster_->in_flight() >= *options_.max_concurrency) {
    held_ = true;  // sent when a request leaves (on_request_finished)
    return;
  }
  held_ = false;
  next_->arrival = sim_.now();  // when it is sent: later than the source's time if it was held
  metrics_.on_arrival(sim_.now(), next_->service_class);
  ++row_.arrivals;
  observer_.on_arrival(*next_);
  cluster_->submit(*next_);
  next_.reset();
  read_next_arrival();
}

void Replay::on_request_finished(const metrics::RequestRecord& record) {
  metrics_.on_finished(record);
  if (record.status == metrics::RequestStatus::kDropped) {
    ++row_.drops;
  } else {
    ++row_.completions;
    row_.output_tokens += record.output_tokens;
  }
  observer_.on_request(record);
  // A held request tries again once the system has taken this one out (the cluster may
  // count it in flight until its callback returns).
  if (held_ && !release_armed_) {
    release_armed_ = true;
    sim_.schedule_at(sim_.now(), *this, engine::EventPayload{kArrival, 0});
  }
  note_if_done();
}

void Replay::note_if_done() {
  if (done_at_ || !source_done_ || cluster_->in_flight() != 0) return;
  done_at_ = sim_.now();
  // A run that outlives its workload goes on sampling and is measured to its end.
  if (!options_.stop_when_served) return;
  usage_at_done_ = cluster_->usage();
  sample_timer_.cancel();
  // The run ends with its workload: whatever else still has events (a scale-down under
  // way) stops here, as measured.
  if (sim_.state() == engine::RunState::kRunning) sim_.stop();
}

// The interval's prefix-cache lookups: each instance's counts since the last row.
void Replay::add_prefix_cache(metrics::TimeseriesRow& row) {
  auto now = cluster_->prefix_cache_by_instance();
  prefix_at_row_start_.resize(now.size());
  for (std::size_t i = 0; i < now.size(); ++i) {
    const std::uint64_t queried = now[i].queried_tokens - prefix_at_row_start_[i].queried_tokens;
    const std::uint64_t hit = now[i].hit_tokens - prefix_at_row_start_[i].hit_tokens;
    row.prefix_queried_tokens += queried;
    row.prefix_hit_tokens += hit;
    if (queried == 0) continue;
    const double rate = static_cast<double>(hit) / static_cast<double>(queried);
    row.prefix_hit_rate_min = std::min(row.prefix_hit_rate_min.value_or(rate), rate);
    row.prefix_hit_rate_max = std::max(row.prefix_hit_rate_max.value_or(rate), rate);
  }
  prefix_at_row_start_ = std::move(now);
}

void Replay::emit_row(SimTime end, const cluster::ServingSystem::Usage& usage) {
  row_.end = end;
  row_.queued = cluster_->queued();
  row_.running = cluster_->running();
  row_.instances = cluster_->instances();
  const auto counts = cluster_->instance_counts();
  row_.prompt_instances = counts.prompt;
  row_.token_instances = counts.token;
  row_.mixed_instances = counts.mixed;
  row_.starting_instances = counts.starting;
  row_.active_instances = counts.active;
  row_.draining_instances = counts.draining;
  row_.inactive_instances = counts.inactive;
  const auto kv_total = cluster_->kv_total_tokens();
  row_.kv_used_fraction =
      kv_total ? static_cast<double>(cluster_->kv_used_tokens()) / static_cast<double>(kv_total) : 0.0;
  const cluster::Utilisation utilisation = cluster::utilisation_between(usage_at_row_start_, usage);
  row_.roofline_utilisation = utilisation.roofline;
  row_.busy_share = utilisation.busy;
  const auto span_us = static_cast<double>((end - row_.start).us());
  row_.serving_gpus = span_us > 0 ? (usage.gpu_us - usage_at_row_start_.gpu_us) / span_us : 0.0;
  add_prefix_cache(row_);
  if (probe_) probe_(row_);
  usage_at_row_start_ = usage;
  overload_.add(row_);
  observer_.on_interval(row_);
  row_ = metrics::TimeseriesRow{};
  row_.start = end;
  if (++rows_ == rows_until_coarser_) {
    interval_ = interval_ + interval_;
    rows_until_coarser_ += next_allowance_;
    next_allowance_ = std::max<std::uint64_t>(1, next_allowance_ / 2);
    if (rows_ == options_.timeseries_row_budget) {
      observer_.on_warning("the time series reached " + std::to_string(rows_) + " rows: its interval is now " +
                           number_text(interval_.seconds()) + " s, and doubles again as rows approach " +
                           std::to_string(2 * rows_));
    }
  }
}

void Replay::sample() {
  // Nothing left that could move the requests still in the system: the run would sample
  // forever. The serving model prevents this; this is the safety net. An empty system
  // idling to its end time (a run that outlives its workload) is fine.
  MESHSIM_CHECK(!source_done_ || sim_.pending_events() > 0 || cluster_->in_flight() == 0,
                std::to_string(cluster_->in_flight()) + " requests are in flight at " +
                    std::to_string(sim_.now().seconds()) + " s and nothing can move them: " +
                    cluster_->describe_waiting());
  emit_row(sim_.now(), cluster_->usage());
  observer_.on_progress(source_.progress(), sim_.now());
  // A final partial row closes the run (see run()).
  sample_timer_.arm_after(interval_);
}

Expected<ReplayResult> Replay::run() {
  start();
  (void)advance_until(options_.until.value_or(SimTime::max()));  // finish() reports a failed source
  return finish();
}

void Replay::start() {
  MESHSIM_CHECK(phase_ == Phase::kCreated, "Replay::start: called twice");
  MESHSIM_CHECK(options_.stop_when_served || options_.until.has_value(),
                "Replay::start: a run that outlives its workload (stop_when_served false) needs an end time");
  phase_ = Phase::kStarted;
  read_next_arrival();
  // A source with no request at all is served at once: a run that stops when served has
  // nothing to sample (the timer would tick on to the clock's limit).
  if (!done_at_ || !options_.stop_when_served) sample_timer_.arm_after(interval_);
  sim_.set_periodic_hook(4096, [this](const engine::Simulation& s) {
    observer_.on_progress(source_.progress(), s.now());
  });
}

Status Replay::advance_until(SimTime time) {
  MESHSIM_CHECK(phase_ == Phase::kStarted, "Replay::advance_until: call start() first, and not after finish()");
  const SimTime target = options_.until ? std::min(time, *options_.until) : time;
  // A finished simulation (a failed source, or a workload served in a run that stops when
  // served) runs nothing more.
  if (sim_.state() != engine::RunState::kFinished && target >= sim_.now()) sim_.run_until(target);
  if (source_error_) return *source_error_;
  return Ok();
}

bool Replay::done() const {
  return source_error_.has_value() || (done_at_.has_value() && options_.stop_when_served) ||
         (options_.until && sim_.now() >= *options_.until);
}

Expected<ReplayResult> Replay::finish() {
  MESHSIM_CHECK(phase_ == Phase::kStarted, "Replay::finish: call start() first, and finish() once");
  phase_ = Phase::kFinished;
  if (source_error_) return *source_error_;
  // A cancelled sampling event may have moved the clock past the last departure.
  const bool ended_served = done_at_ && options_.stop_when_served;
  const SimTime end = ended_served ? *done_at_ : sim_.now();
  const auto usage = ended_served ? usage_at_done_ : cluster_->usage();
  if (row_.start < end || row_.arrivals + row_.completions + row_.drops > 0) emit_row(end, usage);

  // Requests still in the system are reported with only what had happened by the end.
  std::uint64_t in_flight = 0;
  cluster_->for_each_in_flight([&](const metrics::RequestRecord& live) {
    metrics::RequestRecord record = live;
    if (record.started && *record.started > end) record.started.reset();
    if (record.first_token && *record.first_token > end) record.first_token.reset();
    record.finished.reset();
    record.tbt_max = SimTime::zero();
    ++in_flight;
    observer_.on_request(record);
  });
  metrics_.set_in_flight(in_flight);
  const auto& counts = metrics_.counts();
  MESHSIM_CHECK(counts.arrived == counts.completed + counts.dropped + counts.in_flight,
                "request counts do not add up");
  observer_.on_progress(1.0, end);

  ReplayResult result;
  result.end_time = end;
  result.workload_served_at = done_at_;
  result.prefix_cache = cluster_->prefix_cache_by_instance();
  result.events = sim_.events_processed();
  result.utilisation = cluster::utilisation_between({}, usage);
  result.overload = overload_.verdict();
  result.gpu_hours = usage.gpu_us / 3.6e9;
  result.instance_hours = usage.instance_us / 3.6e9;
  result.cost = usage.cost_usd;
  return result;
}

}  // namespace meshsim::replay
