#include "sim/run/autoscaler_builder.hpp"

#include "sim/autoscale/elastic_scheduler.hpp"
#include "sim/autoscale/oracle.hpp"
#include "sim/autoscale/target_tracking.hpp"

#include <algorithm>

namespace meshsim::run {

std::unique_ptr<autoscale::Autoscaler> make_autoscaler(const configs::AutoscalerSpec& spec,
                                                       const std::vector<cluster::InstanceGroup>& start_state,
                                                       const metrics::SloBook& slos,
                                                       std::unique_ptr<traces::RequestSource> lookahead) {
  std::vector<cluster::InstanceTag> pools;
  for (const auto& group : start_state) {
    if (std::find(pools.begin(), pools.end(), group.tag) == pools.end()) pools.push_back(group.tag);
  }
  switch (spec.policy) {
    case configs::AutoscalerPolicy::kNone: return nullptr;
    case configs::AutoscalerPolicy::kStatic: {
      auto sizes = spec.static_sizes;
      for (const auto tag : pools) {
        const bool named = std::any_of(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == tag; });
        if (named) continue;
        std::uint32_t size = 0;
        for (const auto& group : start_state) size += group.tag == tag ? group.count : 0;
        sizes.emplace_back(tag, size);
      }
      return std::make_unique<autoscale::StaticAutoscaler>(std::move(sizes), spec.static_interval);
    }
    case configs::AutoscalerPolicy::kElastic: return std::make_unique<autoscale::ElasticAutoscaler>(spec.elastic, pools);
    case configs::AutoscalerPolicy::kTargetTracking:
      return std::make_unique<autoscale::TargetTrackingAutoscaler>(spec.target_tracking, pools, slos);
    case configs::AutoscalerPolicy::kOracle: {
      autoscale::OracleConfig oracle = spec.oracle;
      oracle.tbt_target = slos.run.tbt;
      return std::make_unique<autoscale::OracleAutoscaler>(oracle, pools, std::move(lookahead));
    }
  }
  return nullptr;
}

}  // namespace meshsim::run
