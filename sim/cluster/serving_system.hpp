#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/metrics/request_record.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::cluster {

using metrics::RequestRecord;

// Where requests go when they leave a serving system (completed or dropped).
class RequestSink {
 public:
  virtual void on_request_finished(const RequestRecord& record) = 0;

 protected:
  ~RequestSink() = default;
};

// What instances do over time, for timelines (Chrome/Perfetto traces). Called at the end
// of each piece of work, with its start; a folded run of decode iterations is one call.
class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  virtual void on_instance(std::uint32_t instance, std::uint32_t server, std::string_view tag) = 0;
  virtual void on_iteration(std::uint32_t instance, engine::SimTime start, engine::SimTime end,
                            std::uint32_t prompts, std::uint32_t decodes, std::uint32_t iterations) = 0;
  virtual void on_transfer(std::uint64_t request, std::uint32_t from, std::uint32_t to, engine::SimTime start,
                           engine::SimTime end) = 0;
  // An instance entered a lifecycle state ("starting", "active", "draining", "inactive",
  // "removed") at `time`.
  virtual void on_instance_state(std::uint32_t /*instance*/, std::string_view /*state*/, engine::SimTime /*time*/) {}
  // A batch job's run on a node of a shared cluster ended, finished or preempted.
  virtual void on_batch_run(std::string_view /*job*/, std::uint32_t /*node*/, engine::SimTime /*start*/,
                            engine::SimTime /*end*/, bool /*preempted*/) {}
};

// A simulated serving cluster as the replay sees it: requests go in at their arrival
// time, records come out through a RequestSink, and its state can be sampled.
class ServingSystem {
 public:
  virtual ~ServingSystem() = default;

  // Routes a request arriving now.
  virtual void submit(const traces::TraceRequest& request) = 0;

  // Requests waiting (for a batch slot, KV memory or a KV transfer) and being served.
  virtual std::uint64_t queued() const = 0;
  virtual std::uint64_t running() const = 0;
  std::uint64_t in_flight() const { return queued() + running(); }
  // Instances that exist (in any state).
  virtual std::uint32_t instances() const = 0;
  // Existing instances by what they do (prompt: prefill only, token: decode only, mixed:
  // both) and by lifecycle state (see InstanceState in llm_cluster.hpp).
  struct InstanceCounts {
    std::uint32_t prompt = 0, token = 0, mixed = 0;
    std::uint32_t starting = 0, active = 0, draining = 0, inactive = 0;
  };
  virtual InstanceCounts instance_counts() const {
    InstanceCounts counts;
    counts.mixed = counts.active = instances();
    return counts;
  }
  // KV-cache tokens in use and in total over the instances that hold a cache (0 / 0
  // where not modelled).
  virtual std::uint64_t kv_used_tokens() const { return 0; }
  virtual std::uint64_t kv_total_tokens() const { return 0; }
  // Prefix caching from the start of the run to now, per instance (by instance id,
  // removed ones included; empty where not modelled): prompt tokens of the requests
  // admitted with nothing computed, and of those found in the instance's cache.
  // With a host KV tier (vLLM's CPU offloading), `host` counts its hits and copies.
  struct PrefixCacheCounts {
    std::uint64_t queried_tokens = 0, hit_tokens = 0;
    HostKvCounts host;
  };
  virtual std::vector<PrefixCacheCounts> prefix_cache_by_instance() const { return {}; }

  // Totals from the start of the run to now, as integrals over simulated time (capacity
  // comes and goes), so a figure over an interval is the ratio of their increases
  // (utilisation_between):
  // - work_unit_us / capacity_unit_us: work done and serving capacity in unit-microseconds
  //   (LlmCluster: each iteration's work at the GPUs' peak compute or bandwidth, whichever
  //   binds, over serving instances; FixedLatencyCluster: batch slots in use over slots);
  // - busy_instance_us / serving_instance_us: instance-microseconds with an iteration
  //   (or a request) running, over instance-microseconds able to serve (ACTIVE, DRAINING);
  // - GPU-microseconds held by instances on servers (STARTING, ACTIVE, DRAINING); cost of
  //   the servers, USD; instance-microseconds on servers.
  struct Usage {
    double work_unit_us = 0.0;
    double capacity_unit_us = 0.0;
    double busy_instance_us = 0.0;
    double serving_instance_us = 0.0;
    double gpu_us = 0.0;
    double cost_usd = 0.0;
    double instance_us = 0.0;
  };
  virtual Usage usage() const = 0;

  // Reports instance activity to `sink` from now on (nullptr: stop); no-op by default.
  virtual void set_activity_sink(ActivitySink* /*sink*/) {}

  // What holds the requests in the system, for an error when a run cannot end (requests
  // in flight and no event left that could move them).
  virtual std::string describe_waiting() const { return {}; }

  // Visits the requests still in the system, in id order.
  virtual void for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const = 0;

  // The requests in the system still waiting for their first token: how many arrived
  // before `cutoff`, and the arrival times of the others (oldest first). Asked at every
  // decision of an RL environment, whose backlog under overload can be large: a serving
  // model answers from its recent arrivals; this default, which visits every request in
  // flight, is the slow twin its tests compare with.
  struct FirstTokenBacklog {
    std::uint64_t arrived_before = 0;
    std::vector<engine::SimTime> recent;
  };
  virtual FirstTokenBacklog awaiting_first_token(engine::SimTime cutoff) const {
    FirstTokenBacklog backlog;
    for_each_in_flight([&](const RequestRecord& record) {
      if (record.first_token) return;
      if (record.arrival < cutoff) {
        ++backlog.arrived_before;
      } else {
        backlog.recent.push_back(record.arrival);
      }
    });
    std::sort(backlog.recent.begin(), backlog.recent.end());
    return backlog;
  }
};

// What serving did with its capacity between two usage readings. Both are shares in
// [0, 1], 0 when nothing could serve:
// - roofline: the work done at the GPUs' peak FLOPs or memory bandwidth (whichever binds
//   each iteration: model FLOPs or bandwidth utilisation) over serving capacity; a
//   loaded cluster of small decode batches reads low here though it is never idle;
// - busy: the share of serving instance-time with an iteration running; it reaches 1
//   under overload.
struct Utilisation {
  double roofline = 0.0;
  double busy = 0.0;
};
inline Utilisation utilisation_between(const ServingSystem::Usage& before, const ServingSystem::Usage& after) {
  const double capacity = after.capacity_unit_us - before.capacity_unit_us;
  const double serving = after.serving_instance_us - before.serving_instance_us;
  return {capacity > 0 ? (after.work_unit_us - before.work_unit_us) / capacity : 0.0,
          serving > 0 ? (after.busy_instance_us - before.busy_instance_us) / serving : 0.0};
}

}  // namespace meshsim::cluster
