#include "scheduler/preemption_rules.hpp"

#include <algorithm>

namespace meshsim::scheduler {

std::optional<VictimRule> victim_rule(const PreemptionPolicy& policy, const IncomingTask& incoming,
                                      const std::string& victim_pool, const Labels& victim_labels) {
  const bool same_pool = victim_pool == incoming.pool;
  if (!same_pool && policy.is_protected(victim_pool)) return std::nullopt;
  if (policy.enable_label_preemption) {
    for (const auto& [key, value] : incoming.labels) {
      const auto victim_value = victim_labels.find(key);
      if (victim_value != victim_labels.end() && policy.label_dominates(key, value, victim_value->second)) {
        VictimRule rule;
        rule.reason = PreemptReason::kLabel;
        rule.delta_floor = policy.label_max_priority_deficit ? -*policy.label_max_priority_deficit
                                                             : -std::numeric_limits<double>::infinity();
        rule.score_floor = policy.label_priority_threshold;
        rule.needs_min_score = false;
        return rule;
      }
    }
  }
  VictimRule rule;
  if (same_pool) {
    rule.reason = PreemptReason::kSamePool;
    rule.delta_floor = policy.same_pool_priority_threshold;
    return rule;
  }
  if (!policy.enable_cross_pool_preemption) return std::nullopt;
  rule.reason = PreemptReason::kCrossPool;
  rule.delta_floor = policy.cross_pool_priority_threshold;
  return rule;
}

ScoreTerms score_terms(double kappa, double priority, double deadline) {
  const double kappa_deadline = kappa * deadline;
  return ScoreTerms{priority, kappa_deadline, kappa_deadline - priority};
}

double preempt_score(const VictimRule& rule, double incoming_priority, double kappa_now, const ScoreTerms& terms) {
  // delta + kappa * max(deadline - now, 0) = p + max(kappa*deadline - priority - kappa*now, -priority).
  // Each operation is monotone, so the maximum over tasks is the same expression of the
  // maxima: exact bounds for the index.
  const double by_priority =
      incoming_priority + std::max(terms.kappa_deadline_minus_priority - kappa_now, -terms.priority);
  const double by_floor = rule.score_floor + std::max(terms.kappa_deadline - kappa_now, 0.0);
  return std::max(by_priority, by_floor);
}

}  // namespace meshsim::scheduler
