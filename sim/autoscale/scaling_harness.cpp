#include "sim/autoscale/scaling_harness.hpp"

namespace meshsim::autoscale {

ScalingHarness::ScalingHarness(engine::Simulation& sim, const replay::Replay& replay, cluster::LlmCluster& cluster,
                               cluster::ScalingConfig config, std::unique_ptr<Autoscaler> policy,
                               cluster::InstancePlacement* placement)
    : manager_(sim, cluster, config, placement), policy_(std::move(policy)) {
  if (policy_) {
    loop_ = std::make_unique<AutoscalerLoop>(sim, manager_, *policy_, [&replay] { return !replay.done(); });
  }
}

void ScalingHarness::start() {
  if (loop_) loop_->start();
}

}  // namespace meshsim::autoscale
