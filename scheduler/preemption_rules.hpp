#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>

#include "scheduler/preemption_policy.hpp"

namespace meshsim::scheduler {

using Labels = std::map<std::string, std::string>;

enum class PreemptReason { kLabel, kSamePool, kCrossPool };
inline constexpr EnumNames kPreemptReasonNames{
    std::array{std::pair{PreemptReason::kLabel, std::string_view("label_based_preemption")},
               std::pair{PreemptReason::kSamePool, std::string_view("same_pool_preemption")},
               std::pair{PreemptReason::kCrossPool, std::string_view("cross_pool_preemption")}}};

// The task that wants resources.
struct IncomingTask {
  double priority = 0.0;
  std::string pool;
  Labels labels;
};

// How the policy judges every running task of one pool with one set of labels, for one
// incoming task (spec section 3, seed 001 section 5.4): label rules first, then the pool
// rules; protected pools are never victims of another pool's work.
struct VictimRule {
  PreemptReason reason = PreemptReason::kSamePool;
  // A victim qualifies when (incoming priority - its priority) >= delta_floor.
  double delta_floor = 0.0;
  // Label rules floor the priority term of the score at the label threshold; the pool
  // rules do not floor it (-infinity).
  double score_floor = -std::numeric_limits<double>::infinity();
  // Pool-rule candidates must also reach min_preempt_score; label matches need not.
  bool needs_min_score = true;
};

std::optional<VictimRule> victim_rule(const PreemptionPolicy& policy, const IncomingTask& incoming,
                                      const std::string& victim_pool, const Labels& victim_labels);

// preempt_score = max(delta, floor) + kappa * max(deadline - now, 0), where delta is the
// priority difference and deadline = start + estimated duration (start alone when the
// duration is unknown, so the remaining time is 0). Past its deadline a task scores
// exactly max(delta, floor); before it, the score grows with the deadline.
double preempt_score(const VictimRule& rule, double incoming_priority, double victim_priority, double kappa,
                     double deadline, double now);

// The rule's test on one victim, apart from the minimum runtime.
inline bool delta_qualifies(const VictimRule& rule, double incoming_priority, double victim_priority) {
  return incoming_priority - victim_priority >= rule.delta_floor;
}

}  // namespace meshsim::scheduler
