#include "rl/env/reward.hpp"

#include <algorithm>

namespace meshsim::rl {

RewardTerms reward_terms(const RewardInputs& in, const configs::RewardWeights& weights) {
  RewardTerms terms;
  terms.slo = weights.slo_weight * static_cast<double>(in.missed) / in.reference_requests;
  terms.waiting = weights.waiting_weight * in.late / in.reference_requests;
  terms.cost = weights.cost_weight * in.mean_instances;
  terms.churn = weights.churn_weight * static_cast<double>(in.actions);
  return terms;
}

double late_share(double arrival_s, double interval_start_s, double interval_end_s, double ttft_target_s) {
  const double late_from = std::max(arrival_s + ttft_target_s, interval_start_s);
  const double length = interval_end_s - interval_start_s;
  if (length <= 0 || late_from >= interval_end_s) return 0.0;
  return (interval_end_s - late_from) / length;
}

}  // namespace meshsim::rl
