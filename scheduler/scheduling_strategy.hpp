#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/preemption_rules.hpp"
#include "scheduler/task.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::scheduler {

// A scheduling strategy plugin (seed 002's SchedulingStrategyPlugin): where a task's
// agent goes, what priority the scheduler gives it, and a last word on preemptions the
// policy allows. Selected by name (`make_scheduling_strategy`).
class SchedulingStrategy {
 public:
  virtual ~SchedulingStrategy() = default;
  virtual std::string_view name() const = 0;
  // How placement orders fitting nodes: the built-ins use the free-capacity index;
  // kScore (the default for plugins) asks score() of every fitting node, O(nodes).
  virtual NodeOrder node_order() const { return NodeOrder::kScore; }
  // Higher is better: how well `node` suits a task needing `need` (it fits).
  virtual double score(const ResourceVector& need, const Node& node) const = 0;
  // The priority the scheduler uses for a submitted task.
  virtual double priority(const TaskSpec& task) const { return task.priority; }
  // A veto over a preemption the policy allows: false keeps `victim` running.
  virtual bool should_preempt(const IncomingTask& incoming, const Task& victim) const {
    (void)incoming;
    (void)victim;
    return true;
  }
};

// "binpack" (the default): the fitting node with the least free left (fewest GPUs, then
// CPUs, then memory), so big tasks find room later. "spread": the fitting node with the
// most free, so load stays even and a node failure hurts less.
Expected<std::unique_ptr<SchedulingStrategy>> make_scheduling_strategy(std::string_view name);

}  // namespace meshsim::scheduler
