#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "sim/engine/simulation.hpp"
#include "sim/cluster/fixed_latency_config.hpp"
#include "sim/cluster/pool_router.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/metrics/level_integral.hpp"

namespace meshsim::cluster {

using engine::SimTime;
using metrics::RequestRecord;

class FixedLatencyCluster final : public ServingSystem, private engine::EventHandler {
 public:
  FixedLatencyCluster(engine::Simulation& sim, FixedLatencyConfig config, RequestSink& sink);

  void submit(const traces::TraceRequest& request) override;
  std::uint64_t queued() const override { return queued_; }
  std::uint64_t running() const override { return running_; }
  std::uint32_t instances() const override { return static_cast<std::uint32_t>(instances_.size()); }
  // Capacity units are batch slots; the instances never change.
  Usage usage() const override;
  void for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const override;

 private:
  struct Instance {
    std::deque<std::uint32_t> queue;  // slots waiting
    std::uint32_t running = 0;
  };

  void on_event(const engine::EventPayload& payload) override;
  void start(std::uint32_t instance, std::uint32_t slot);
  void update_load(std::uint32_t instance);

  engine::Simulation& sim_;
  FixedLatencyConfig config_;
  RequestSink& sink_;
  std::vector<Instance> instances_;
  std::vector<RequestRecord> slots_;  // records of requests in the system
  std::vector<std::uint32_t> free_slots_;
  std::vector<bool> slot_used_;
  PoolRouter router_;  // every instance, loaded by its queued + running requests
  std::uint64_t queued_ = 0;
  std::uint64_t running_ = 0;
  SimTime start_;
  metrics::LevelIntegral busy_;  // batch slots in use
  metrics::LevelIntegral busy_instances_;  // instances with a request running
};

}  // namespace meshsim::cluster
