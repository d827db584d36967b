#include "sim/cluster/fixed_latency_cluster.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::cluster {

FixedLatencyCluster::FixedLatencyCluster(engine::Simulation& sim, FixedLatencyConfig config,
                                         RequestSink& sink)
    : sim_(sim),
      config_(config),
      sink_(sink),
      instances_(config.instances),
      router_(config.routing),
      start_(sim.now()),
      busy_(sim.now()),
      busy_instances_(sim.now()) {
  MESHSIM_CHECK(config_.instances > 0 && config_.max_batch > 0,
                "FixedLatencyCluster needs at least one instance and one batch slot");
  MESHSIM_CHECK(config_.routing == RoutePolicy::kRoundRobin || config_.routing == RoutePolicy::kFewestRequests,
                "FixedLatencyCluster routes round_robin or fewest_requests");
  for (std::uint32_t i = 0; i < config_.instances; ++i) router_.add(i, 0);
}

void FixedLatencyCluster::update_load(std::uint32_t instance) {
  const Instance& in = instances_[instance];
  router_.update(instance, static_cast<std::int64_t>(in.queue.size() + in.running));
}

ServingSystem::Usage FixedLatencyCluster::usage() const {
  const SimTime now = sim_.now();
  const auto us = static_cast<double>((now - start_).us());
  const double instances = static_cast<double>(config_.instances);
  return Usage{.work_unit_us = busy_.total(now),
               .capacity_unit_us = instances * config_.max_batch * us,
               .busy_instance_us = busy_instances_.total(now),
               .serving_instance_us = instances * us,
               .gpu_us = instances * config_.gpus_per_instance * us,
               .cost_usd = instances * config_.cost_per_instance_hour * us / 3.6e9,
               .instance_us = instances * us};
}

void FixedLatencyCluster::submit(const traces::TraceRequest& request) {
  RequestRecord record;
  record.id = request.id;
  record.arrival = sim_.now();
  record.prompt_tokens = request.prompt_tokens;
  record.output_tokens = request.output_tokens;
  record.service_class = request.service_class;
  const std::uint32_t instance = router_.pick();
  record.prompt_instance = instance;
  record.instance = instance;
  Instance& in = instances_[instance];

  if (in.running >= config_.max_batch && config_.max_queue && in.queue.size() >= *config_.max_queue) {
    record.status = metrics::RequestStatus::kDropped;
    record.dropped_for = metrics::DropReason::kQueueFull;
    sink_.on_request_finished(record);
    return;
  }
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(record);
    slot_used_.push_back(true);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = record;
    slot_used_[slot] = true;
  }
  if (in.running < config_.max_batch) {
    start(instance, slot);
  } else {
    in.queue.push_back(slot);
    ++queued_;
  }
  update_load(instance);
}

void FixedLatencyCluster::start(std::uint32_t instance, std::uint32_t slot) {
  busy_.add(1.0, sim_.now());
  if (instances_[instance].running++ == 0) busy_instances_.add(1.0, sim_.now());
  ++running_;
  RequestRecord& record = slots_[slot];
  const SimTime now = sim_.now();
  const double prefill_us_exact = config_.prefill_us_per_token * static_cast<double>(record.prompt_tokens);
  const std::int64_t decode_steps = static_cast<std::int64_t>(record.output_tokens) - 1;
  // Checked in floating point first: the integer sums below must not overflow.
  const double service_s = config_.prefill_base.seconds() + prefill_us_exact * 1e-6 +
                           config_.time_per_output_token.seconds() * static_cast<double>(decode_steps);
  if (!(service_s <= SimTime::kMaxSeconds)) {
    throw RangeError("the fixed-latency model serves request " + std::to_string(record.id) + " in " +
                     number_text(service_s) + " s, past the simulated time limit of 1e12 s: check prefill_base_ms, "
                     "prefill_us_per_token and time_per_output_token_ms");
  }
  const auto prefill_us = static_cast<std::int64_t>(std::llround(prefill_us_exact));
  record.started = now;
  record.first_token = now + config_.prefill_base + SimTime::from_us(prefill_us);
  record.finished = *record.first_token + SimTime::from_us(config_.time_per_output_token.us() * decode_steps);
  record.tbt_max = decode_steps > 0 ? config_.time_per_output_token : SimTime::zero();
  sim_.schedule_at(*record.finished, *this, engine::EventPayload{slot, instance});
}

void FixedLatencyCluster::on_event(const engine::EventPayload& payload) {
  const auto slot = static_cast<std::uint32_t>(payload.a);
  const auto instance = static_cast<std::uint32_t>(payload.b);
  busy_.add(-1.0, sim_.now());
  Instance& in = instances_[instance];
  if (--in.running == 0) busy_instances_.add(-1.0, sim_.now());
  --running_;
  RequestRecord& record = slots_[slot];
  record.status = metrics::RequestStatus::kCompleted;
  sink_.on_request_finished(record);
  slot_used_[slot] = false;
  free_slots_.push_back(slot);
  if (!in.queue.empty()) {
    const std::uint32_t next = in.queue.front();
    in.queue.pop_front();
    --queued_;
    start(instance, next);
  }
  update_load(instance);
}

void FixedLatencyCluster::for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const {
  std::vector<const RequestRecord*> live;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slot_used_[i]) live.push_back(&slots_[i]);
  }
  std::sort(live.begin(), live.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  for (const auto* record : live) visit(*record);
}

}  // namespace meshsim::cluster
