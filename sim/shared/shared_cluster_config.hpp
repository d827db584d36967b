#pragma once

// What a SharedCluster (and its BatchRunner) is built with. Plain values over the
// scheduling core's types, not the core itself.

#include <map>
#include <string>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/preemption_policy.hpp"
#include "scheduler/resources.hpp"

namespace meshsim::shared {

// What a class of batch jobs (a trace's qos, a generator's role) becomes in the core.
struct BatchClass {
  std::string pool = "batch";
  double priority = 1.0;
  scheduler::Labels labels;
  double checkpoint_interval_s = 0.0;  // 0: no checkpoints (a preemption loses all work)
  // How its jobs' agents answer a preemption's cancel: after cancel_answer_s seconds
  // (flushing, cleaning up), except a hung_share of them that never answer and are killed
  // at the policy's cancel_timeout. Until its agent stops, a job holds its room for the
  // preemptor, which starts only then.
  double cancel_answer_s = 0.0;
  double hung_share = 0.0;
};

// A fixed cluster shared by LLM serving and batch jobs, under one scheduling core.
struct SharedClusterConfig {
  std::vector<scheduler::NodeSpec> nodes;
  // Protected from other pools' preemption; batch classes may share it.
  std::string serving_pool = "serving";
  // By default above every batch class. Whatever it is, a serving instance is never a
  // victim (it leaves only by draining): a priority below a batch class means serving
  // cannot take that class's GPUs, and its scale-ups wait for them.
  double serving_priority = 100.0;
  // What one serving instance asks of a node: its GPUs (tensor-parallel degree), the
  // custom resource that marks nodes of the serving SKU, and its share of CPU and memory.
  scheduler::ResourceVector instance_resources;
  std::map<std::string, BatchClass> classes;  // by job class (qos or role)
  scheduler::PreemptionPolicy policy;
  bool prune_refusals = true;  // see BatchRunner (false: the exhaustive twin, for tests)
};

}  // namespace meshsim::shared
