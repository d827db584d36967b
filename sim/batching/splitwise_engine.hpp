#pragma once

#include <vector>

#include "sim/batching/instance_engine.hpp"
#include "sim/batching/slot_queue.hpp"

namespace meshsim::cluster {

// SplitwiseSim's batch formation on one instance (BatchingConfig, KvAllocation): prompts
// first come first served under a token budget, decoding sequences paused when left out
// (and put first after max_preemptions), KV reserved whole (kReserve) or a token at a time
// with the latest arrivals evicted when it runs out (kOnDemand). Each step is one batch;
// steady_iterations says how long a decode batch would be formed again unchanged, so that
// the cluster may fold its iterations into one event exactly.
class SplitwiseEngine final : public InstanceEngine {
 public:
  SplitwiseEngine(const BatchingConfig& limits, KvAllocation allocation, std::uint64_t kv_capacity_tokens,
                  Sequences& sequences);

  void enqueue_prefill(std::uint32_t slot) override { prompts_.push_back(slot); }
  void enqueue_transferred(std::uint32_t slot) override { decode_here(slot); }
  void decode_here(std::uint32_t slot) override;
  void remove(std::uint32_t slot) override;
  std::vector<std::uint32_t> evacuate() override;

  const EngineStep& form_step() override;
  const EngineStep& step() const override { return step_; }
  std::uint32_t steady_iterations(std::uint32_t limit) const override;
  void complete(std::uint32_t iterations, StepOutcome& outcome) override;

  bool has_waiting() const override {
    return !prompts_.empty() || !starved_.empty() || !paused_.empty() || !holders_.empty() || !newcomers_.empty();
  }
  std::uint64_t kv_used_tokens(std::uint32_t begun) const override;
  std::uint32_t cached_prefix_tokens(std::uint32_t, std::uint32_t, std::uint32_t) override { return 0; }
  std::string describe() const override;
  std::vector<std::string> check_invariants() const override;

 private:
  bool on_demand() const { return allocation_ == KvAllocation::kOnDemand; }
  bool form_batch();
  void evict_latest();
  void evict_for_recompute(std::uint32_t slot);
  bool break_kv_deadlock();
  bool steady_after_one_iteration() const;
  std::uint64_t prompt_kv_need(const Sequence& s) const;
  std::uint64_t decode_kv_need(const Sequence& s) const;
  // Sequences in their decode phase here, running or not.
  std::uint64_t decoding() const { return step_.decode.size() + starved_.size() + paused_.size() + holders_.size(); }

  BatchingConfig limits_;
  KvAllocation allocation_;
  std::uint64_t capacity_;
  Sequences& seqs_;
  // Waiting work, each queue first come first served.
  SlotQueue prompts_;    // to prefill; evicted sequences to recompute go first
  SlotQueue starved_;    // decoding, left out of max_preemptions batches: before prompts
  SlotQueue paused_;     // decoding, left out of fewer batches (KV kept)
  SlotQueue holders_;    // ready to decode, holding all the KV they need to start
  SlotQueue newcomers_;  // ready to decode once they reserve KV; the head blocks the rest
  // KV tokens held. On demand, the tokens a running step adds are counted when it
  // completes (kv_used_tokens gives them in between).
  std::uint64_t kv_used_ = 0;
  EngineStep step_;  // its decode list stays the batch between steps
  std::vector<std::uint32_t> previous_;
};

}  // namespace meshsim::cluster
