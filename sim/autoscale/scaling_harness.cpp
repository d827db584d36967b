#include "sim/autoscale/scaling_harness.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::autoscale {
namespace {

cluster::LlmCluster& llm_cluster(replay::Replay& replay) {
  auto* cluster = dynamic_cast<cluster::LlmCluster*>(&replay.serving());
  MESHSIM_CHECK(cluster != nullptr, "scaling needs the llm serving model");
  return *cluster;
}

}  // namespace

ScalingHarness::ScalingHarness(engine::Simulation& sim, replay::Replay& replay, cluster::ScalingConfig config,
                               std::unique_ptr<Autoscaler> policy, cluster::InstancePlacement* placement)
    : manager_(sim, llm_cluster(replay), config, placement), policy_(std::move(policy)) {
  if (policy_) {
    loop_ = std::make_unique<AutoscalerLoop>(sim, manager_, *policy_, [&replay] { return !replay.done(); });
  }
}

void ScalingHarness::start() {
  if (loop_) loop_->start();
}

}  // namespace meshsim::autoscale
