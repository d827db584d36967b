#pragma once

#include <cstdint>

#include "configs/rl_config.hpp"

namespace meshsim::rl {

// The reward of one decision interval, every term in one place:
//
//   reward = -(slo + waiting + cost + churn)
//   slo     = slo_weight     * missed / R
//   waiting = waiting_weight * late / R
//   cost    = cost_weight    * mean_instances
//   churn   = churn_weight   * actions
//
// missed: requests that left in the interval missing the SLO (dropped ones included), so
// every request that misses counts once, wherever it falls: a busy interval's misses weigh
// more than a quiet one's, and the optimum does not float with the load.
// late: requests still waiting for their first token at the interval's end, each counting
// the share of the interval it spent past the TTFT target (in [0, 1]): a backlog that
// will miss is priced while it builds, before its requests leave.
// R: the workload's mean requests per decision interval (its requests over its span, at
// rate scale 1), a constant of the environment: one missed request costs the same in every
// episode, and slo is the share of misses when an interval has the mean load.
// mean_instances: instances that existed (any state: STARTING ones cost too), averaged
// over the interval. actions: instances added, drained or migrated in the interval.
struct RewardInputs {
  std::uint64_t missed = 0;
  double late = 0.0;
  double mean_instances = 0.0;
  std::uint64_t actions = 0;
  double reference_requests = 1.0;  // R
};

struct RewardTerms {
  double slo = 0.0, waiting = 0.0, cost = 0.0, churn = 0.0;
  double reward() const { return -(slo + waiting + cost + churn); }
};

RewardTerms reward_terms(const RewardInputs& in, const configs::RewardWeights& weights);

// How much of the interval (start, end] a request waiting since `arrival` spent past
// `ttft_target` without its first token, as a share of the interval, in [0, 1].
double late_share(double arrival_s, double interval_start_s, double interval_end_s, double ttft_target_s);

}  // namespace meshsim::rl
