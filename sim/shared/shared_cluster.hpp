#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/scheduler.hpp"
#include "sim/shared/sim_world.hpp"
#include "sim/shared/batch_runner.hpp"
#include "sim/cluster/scaling_manager.hpp"

namespace meshsim::shared {

using cluster::InstanceGroup;
using cluster::InstancePlacement;
using cluster::InstanceTag;
using cluster::LlmCluster;
using cluster::PlacedInstance;
using cluster::ServerPool;

// The world joined with the core: the cluster's servers are the core's nodes, each
// serving instance is an agent of the serving pool with its own placement group (a
// scale-up on a full cluster preempts batch work through the core, under the
// preemption policy), and batch jobs are tasks of lower-priority pools run by a
// BatchRunner. A scale-up waits for the agents of the work it preempted to stop (two-phase
// preemption on the simulated clock: see SimWorld and BatchClass). The serving model's servers are the nodes that host instances (created
// when a node takes its first instance, removed when it loses its last).
class SharedCluster final : public InstancePlacement {
 public:
  // Places the start state through the core (before any batch job): an error when it
  // does not fit the nodes.
  static Expected<std::unique_ptr<SharedCluster>> create(engine::Simulation& sim, LlmCluster& serving,
                                                         SharedClusterConfig config,
                                                         std::vector<traces::BatchJobRecord> jobs,
                                                         const std::vector<InstanceGroup>& start_state);

  // Arms the batch arrivals.
  void start() { batch_->start(); }

  Expected<PlacedInstance> place(std::uint32_t instance, InstanceTag tag, ServerPool& servers) override;
  bool release(std::uint32_t instance, std::uint32_t server, ServerPool& servers) override;

  const scheduler::Scheduler& core() const { return core_; }
  const BatchRunner& batch() const { return *batch_; }
  void set_activity_sink(ActivitySink* sink) { batch_->set_activity_sink(sink); }
  const SharedClusterConfig& config() const { return config_; }
  // The core's, the batch runner's and the serving map's invariants; empty when all is well.
  std::vector<std::string> check_invariants() const;
  static constexpr std::string_view kServingTaskPrefix = "serving/instance-";
  static std::string task_id(std::uint32_t instance) {
    return std::string(kServingTaskPrefix) + std::to_string(instance);
  }
  // The actor class of serving instances' core tasks: the kind by which the core's
  // strategy here never picks one as a victim (they leave only by draining).
  static constexpr std::string_view kServingActorClass = "serving";
  // The preemptor's class the batch runner counts for serving instances' preemptions.
  static inline const std::string kServingClass = "serving";

 private:
  SharedCluster(engine::Simulation& sim, LlmCluster& serving, SharedClusterConfig config,
                std::vector<traces::BatchJobRecord> jobs);

  engine::Simulation& sim_;
  LlmCluster& serving_;
  SharedClusterConfig config_;
  shared::SimWorld world_;
  scheduler::Scheduler core_;
  std::unique_ptr<BatchRunner> batch_;
  std::uint32_t serving_preemptor_ = 0;  // the serving instances' id among the batch runner's preemptors
  std::map<std::uint32_t, std::uint32_t> server_of_node_;
  std::map<std::uint32_t, std::uint32_t> node_of_server_;
  std::vector<scheduler::TaskId> task_of_instance_;  // by instance id, while placed
};

}  // namespace meshsim::shared
