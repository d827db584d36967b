#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/batching/instance_engine.hpp"
#include "sim/batching/vllm_scheduler.hpp"

namespace meshsim::cluster {

// vLLM v1's batch formation on one instance: a VllmScheduler (chunked prefill, KV blocks,
// recompute preemption, prefix caching) whose steps this engine turns into EngineSteps
// and whose preemptions it applies to the sequences. A decode-only step may run for as
// many iterations as the scheduler says it would form again unchanged.
class VllmEngine final : public InstanceEngine {
 public:
  VllmEngine(const VllmLimits& limits, std::uint64_t kv_capacity_tokens, Sequences& sequences);

  void enqueue_prefill(std::uint32_t slot) override;
  void enqueue_transferred(std::uint32_t slot) override;
  // The scheduler keeps a request it prefilled running.
  void decode_here(std::uint32_t) override {}
  void remove(std::uint32_t slot) override;
  std::vector<std::uint32_t> evacuate() override { return scheduler_.slots(); }

  void advance(engine::SimTime now) override { scheduler_.advance(now); }
  std::optional<engine::SimTime> wake_at() const override { return scheduler_.next_load_done(); }
  HostKvCounts take_host_counts() override { return scheduler_.take_host_counts(); }
  const EngineStep& form_step() override;
  const EngineStep& step() const override { return step_; }
  std::uint32_t steady_iterations(std::uint32_t limit) const override {
    return scheduler_.steady_iterations(std::min(limit, fewest_left_));
  }
  void complete(std::uint32_t iterations, StepOutcome& outcome) override;

  bool has_waiting() const override { return !scheduler_.empty(); }
  std::uint64_t kv_used_tokens(std::uint32_t begun) const override;
  std::uint32_t cached_prefix_tokens(std::uint32_t slot, std::uint32_t tokens, std::uint32_t begun) override;
  std::string describe() const override;
  std::vector<std::string> check_invariants() const override { return scheduler_.check_invariants(); }

 private:
  // A chunk producing one more output token (not a prefill that samples its last token).
  bool decodes(const VllmScheduler::Chunk& chunk) const;

  VllmScheduler scheduler_;
  Sequences& seqs_;
  EngineStep step_;
  std::uint32_t fewest_left_ = 0;  // output tokens the step's decodes lack, at least
};

}  // namespace meshsim::cluster
