#pragma once

// The straightforward preemption evaluation: judge every running task, sort. It is the
// reference the indexed VictimIndex is checked against (victim_index_test) and measured
// against (experiments/bench/scheduler_bench).

#include <algorithm>
#include <vector>

#include "scheduler/victim_index.hpp"

namespace meshsim::scheduler::testing {

inline VictimIndex::Evaluation linear_evaluate(const std::vector<VictimIndex::TaskInfo>& tasks,
                                               const PreemptionPolicy& policy, const IncomingTask& incoming,
                                               double now, std::size_t k) {
  const double kappa = policy.remaining_time_weight;
  std::vector<VictimIndex::Candidate> all;
  for (const auto& task : tasks) {
    if (now - task.start < policy.min_runtime_before_preemption) continue;
    const auto rule = victim_rule(policy, incoming, task.pool, task.labels);
    if (!rule || !delta_qualifies(*rule, incoming.priority, task.priority)) continue;
    const double score = preempt_score(*rule, incoming.priority, task.priority, kappa, task.deadline, now);
    if (rule->needs_min_score && score < policy.min_preempt_score) continue;
    all.push_back({task.seq, score, rule->reason, 0});
  }
  VictimIndex::Evaluation out;
  out.eligible = all.size();
  const std::size_t keep = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                    [](const auto& a, const auto& b) { return a.score > b.score || (a.score == b.score && a.seq < b.seq); });
  out.best.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep));
  return out;
}

}  // namespace meshsim::scheduler::testing
