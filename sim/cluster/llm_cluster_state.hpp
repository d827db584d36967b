#pragma once

// LlmCluster's request slots, shared by its source files (llm_cluster.cpp: requests,
// routing and the Splitwise flow; llm_steps.cpp: timed and folded steps;
// llm_evacuation.cpp: a draining instance's requests move; llm_cluster_views.cpp: what it
// reports).

#include "sim/cluster/llm_cluster.hpp"

namespace meshsim::cluster {

// A request slot's state the cluster alone keeps (its engine state is the slot's Sequence).
struct LlmCluster::Live {
  RequestRecord record;
  bool used = false;
  std::uint32_t instance = 0;    // where it is now
  bool in_transit = false;       // its KV cache is on its way to `instance`
  SimTime last_token;
  SimTime tbt_max;
  SimTime deadline = SimTime::max();  // arrival + the request timeout
};

}  // namespace meshsim::cluster
