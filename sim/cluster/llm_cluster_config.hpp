#pragma once

// What an LlmCluster is built with: the serving options and what the catalog made of
// them (model, hardware, performance models). Plain values: no simulation class.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/serving_options.hpp"
#include "sim/perf/hardware.hpp"
#include "sim/perf/perf_model.hpp"

namespace meshsim::cluster {

// The GPUs one pool's instances run on when not the cluster's: Splitwise-HA runs prompt
// instances on H100 and token instances on A100 servers. The pool's instances live
// on servers of that SKU (servers are shared only by pools of the same SKU and TP), with
// that SKU's HBM for their KV cache, its performance model, cost and GPUs.
struct PoolHardware {
  InstanceTag tag = InstanceTag::kPrompt;
  SkuSpec sku;
  std::uint32_t tensor_parallel = 8;
  std::shared_ptr<const PerfModel> perf;
  std::string perf_source;  // where `perf`'s figures come from: fitted, borrowed, measured
};

// The cluster as built: the options (one definition: configs fills them) and what the
// catalog resolved them to.
struct LlmClusterConfig : ServingOptions {
  ModelSpec model;
  SkuSpec sku;
  std::uint32_t tensor_parallel = 8;
  std::shared_ptr<const PerfModel> perf;
  std::string perf_source;  // where `perf`'s figures come from: fitted, borrowed, measured
  std::vector<InstanceGroup> start_state;  // instances packed onto servers of their SKU
  // Pools on other hardware than sku/tensor_parallel/perf, at most one entry per tag.
  // Requests cost the API server what `perf` says, whichever pool serves them.
  std::vector<PoolHardware> pool_hardware;
};

}  // namespace meshsim::cluster
