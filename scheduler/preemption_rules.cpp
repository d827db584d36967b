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

double preempt_score(const VictimRule& rule, double incoming_priority, double victim_priority, double kappa,
                     double deadline, double now) {
  const double remaining = deadline > now ? deadline - now : 0.0;
  return std::max(incoming_priority - victim_priority, rule.score_floor) + kappa * remaining;
}

}  // namespace meshsim::scheduler
