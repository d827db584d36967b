#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "sim/cluster/scaling_manager.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/timer.hpp"

namespace meshsim::replay {
class ReplayObserver;  // sim/replay/replay.hpp
}

namespace meshsim::autoscale {

using cluster::InstanceState;
using cluster::InstanceTag;
using cluster::PoolKv;
using cluster::PoolSnapshot;
using cluster::ScalingManager;
using engine::SimTime;

// Brings a pool's size (ACTIVE + STARTING) to `desired`: scale-ups, or first cancelled
// scale-ups still STARTING (newest first), then drains of the least-loaded ACTIVE
// instances. Limits are the manager's (blocked actions are counted there).
void scale_pool_to(ScalingManager& manager, InstanceTag tag, std::uint32_t desired);

// An autoscaling policy: every interval() it looks at the cluster and acts through the
// ScalingManager, the one actuator (so limits, delays and logs are the same for all
// policies, and the RL agent is one more implementation).
class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  virtual std::string_view name() const = 0;
  virtual SimTime interval() const = 0;
  virtual void decide(ScalingManager& manager) = 0;
  // What the policy watches of the requests themselves (arrivals and completions), when
  // it sizes on their work; the run passes it every arrival and finished request.
  virtual replay::ReplayObserver* watcher() { return nullptr; }
};

// A fixed size per pool (the start state's unless given): the baseline that never scales.
class StaticAutoscaler final : public Autoscaler {
 public:
  // `sizes`: desired instances per pool; a pool not named keeps its size at the start.
  StaticAutoscaler(std::vector<std::pair<InstanceTag, std::uint32_t>> sizes, SimTime interval)
      : sizes_(std::move(sizes)), interval_(interval) {}
  std::string_view name() const override { return "static"; }
  SimTime interval() const override { return interval_; }
  void decide(ScalingManager& manager) override {
    for (const auto& [tag, size] : sizes_) scale_pool_to(manager, tag, size);
  }

 private:
  std::vector<std::pair<InstanceTag, std::uint32_t>> sizes_;
  SimTime interval_;
};

// Calls an autoscaler every interval from `start`, while `running()` says the run goes
// on (so the decision events stop once the workload is served and the run can end).
class AutoscalerLoop final : private engine::EventHandler {
 public:
  AutoscalerLoop(engine::Simulation& sim, ScalingManager& manager, Autoscaler& policy,
                 std::function<bool()> running);
  // First decision at now (the policy sets the start state's size at once).
  void start();
  // No more decisions. The loop must outlive its queued timer event (engine timers are
  // cancelled lazily), so a replaced loop is stopped and kept, not destroyed.
  void stop() { stopped_ = true; }
  std::uint64_t decisions() const { return decisions_; }

 private:
  void on_event(const engine::EventPayload& payload) override;

  ScalingManager& manager_;
  Autoscaler& policy_;
  std::function<bool()> running_;
  engine::Timer timer_;
  std::uint64_t decisions_ = 0;
  bool stopped_ = false;
};

}  // namespace meshsim::autoscale
