#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/autoscale/autoscaler_options.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::autoscale {

// Not a policy one could deploy: the lower bound on cost that comparisons are measured
// against. It reads the workload ahead (its own copy of the request stream) and, at the
// start of each window, sizes every pool for the requests arriving in it, with instant
// scaling (run it with scale_up_delay 0). Capacity per instance comes from the
// performance model: prefill at the window's mean prompt, and decode at the largest batch
// whose iteration stays within the TBT target and whose KV fits:
//   prompt work = prompt tokens / prefill rate, decode work = output tokens / decode rate,
//   instances = ceil(work / (window * target_utilisation)), at least 1;
// a mixed pool does both, a prompt pool the first and a token pool the second.
class OracleAutoscaler final : public Autoscaler {
 public:
  OracleAutoscaler(OracleConfig config, std::vector<InstanceTag> pools,
                   std::unique_ptr<traces::RequestSource> lookahead);
  std::string_view name() const override { return "oracle"; }
  SimTime interval() const override { return config_.window; }
  void decide(ScalingManager& manager) override;

  struct Demand {
    std::uint64_t requests = 0, prompt_tokens = 0, output_tokens = 0;
  };
  // The requests arriving in [from, from + window), read from the lookahead source.
  Demand demand(SimTime from);
  // Instances a pool needs for `demand` on `cluster`'s deployment.
  std::uint32_t size_for(const Demand& demand, InstanceTag pool, const cluster::ScalingView& view) const;

 private:
  OracleConfig config_;
  std::vector<InstanceTag> pools_;
  std::unique_ptr<traces::RequestSource> lookahead_;
  std::optional<traces::TraceRequest> next_;  // read past the last window
  bool exhausted_ = false;
};

}  // namespace meshsim::autoscale
