#pragma once

#include <memory>
#include <vector>

#include "configs/scaling_config.hpp"
#include "sim/autoscale/autoscaler.hpp"
#include "sim/metrics/run_metrics.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::run {

// The policy `spec` names for a cluster with these pools (start-state tags); nullptr for
// none. The oracle reads `lookahead` (its own copy of the workload) and sizes for the
// run's TBT target; capacity-units target tracking corrects its capacity by the requests
// that miss their SLO (`slos`); other policies ignore both.
std::unique_ptr<autoscale::Autoscaler> make_autoscaler(const configs::AutoscalerSpec& spec,
                                                       const std::vector<cluster::InstanceGroup>& start_state,
                                                       const metrics::SloBook& slos,
                                                       std::unique_ptr<traces::RequestSource> lookahead);

}  // namespace meshsim::run
