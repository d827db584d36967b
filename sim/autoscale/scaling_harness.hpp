#pragma once

#include <memory>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/replay/replay.hpp"

namespace meshsim::autoscale {

// A replay's LlmCluster under a ScalingManager and, optionally, an autoscaler that
// decides every interval from the replay's start while the replay runs (its decision
// events stop once the workload is served, so the run ends).
class ScalingHarness {
 public:
  // `cluster`: the LlmCluster `replay` serves with (the only serving model that scales;
  // llm_cluster_factory hands it back). `placement`: where instances' GPUs come from (a
  // shared cluster); none: elastic servers.
  ScalingHarness(engine::Simulation& sim, const replay::Replay& replay, cluster::LlmCluster& cluster,
                 cluster::ScalingConfig config, std::unique_ptr<Autoscaler> policy,
                 cluster::InstancePlacement* placement = nullptr);
  // Arms the first decision (at the current time): call after Replay::start().
  void start();

  ScalingManager& manager() { return manager_; }
  const ScalingManager& manager() const { return manager_; }
  const Autoscaler* policy() const { return policy_.get(); }
  std::uint64_t decisions() const { return loop_ ? loop_->decisions() : 0; }

 private:
  ScalingManager manager_;
  std::unique_ptr<Autoscaler> policy_;
  std::unique_ptr<AutoscalerLoop> loop_;
};

}  // namespace meshsim::autoscale
