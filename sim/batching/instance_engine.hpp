#pragma once

// The seam between the serving cluster and an instance's batch formation (as inference-sim
// keeps batch formation behind an interface and Vidur one file per replica scheduler): an
// InstanceEngine queues the requests routed to one instance, forms each step and applies
// what the step did to their KV. It never schedules an event, prices a step or records a
// metric: LlmCluster times its steps with the performance model, moves requests and keeps
// their records, whatever the engine.
//
// Engines (make_engine): SplitwiseEngine (SplitwiseSim's rules, splitwise_engine.hpp) and
// VllmEngine (vLLM v1's scheduler, vllm_engine.hpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/batching/sequence.hpp"
#include "sim/perf/perf_model.hpp"

namespace meshsim::cluster {

// A step as formed: who runs and the work the performance model prices.
struct EngineStep {
  std::vector<std::uint32_t> prefill;  // slots prefilling (or recomputing) in it
  std::vector<std::uint32_t> decode;   // slots producing one token per iteration
  PrefillWork prefill_work;
  DecodeWork decode_work;  // of its first iteration
  // Evicted while it was formed, whose recomputation began (their pending prefill is the
  // cluster's to count).
  std::vector<std::uint32_t> recompute_started;
  // Prefix caching: prompt tokens of the requests admitted with nothing computed, and of
  // those found cached.
  std::uint64_t queried_tokens = 0, hit_tokens = 0;
  bool empty() const { return prefill.empty() && decode.empty(); }
};

// What a completed step did to its requests.
struct StepOutcome {
  std::vector<std::uint32_t> finished;   // decoded their last token (still held: the cluster removes them)
  std::vector<std::uint32_t> prefilled;  // prompt (or recomputation) computed, a token produced
};

class InstanceEngine {
 public:
  virtual ~InstanceEngine() = default;

  // --- Requests join (each slot is in at most one engine at a time).
  // To be prefilled here: new, or recomputing its KV (Sequence::recomputing).
  virtual void enqueue_prefill(std::uint32_t slot) = 0;
  // Prefilled elsewhere, its prompt's KV arrived here: it decodes here.
  virtual void enqueue_transferred(std::uint32_t slot) = 0;
  // Prefilled (or recomputed) here by the step just completed: it decodes here.
  virtual void decode_here(std::uint32_t slot) = 0;
  // Leaves (finished, handed to a token instance, moved or aborted): its KV is released.
  // A slot step() runs leaves only after complete().
  virtual void remove(std::uint32_t slot) = 0;
  // Every request here, oldest queue first, for evacuation: each then leaves by remove().
  virtual std::vector<std::uint32_t> evacuate() = 0;

  // --- Steps.
  // The time is now, before a step is formed (an engine with transfers of its own, a host
  // KV tier's loads, reads the clock here; it never schedules an event).
  virtual void advance(engine::SimTime /*now*/) {}
  // When a transfer in progress ends that may let a step form or change: the cluster forms
  // a step then (or cuts a folded run there), as for new work.
  virtual std::optional<engine::SimTime> wake_at() const { return std::nullopt; }
  // What the engine's host KV tier did since the last call.
  virtual HostKvCounts take_host_counts() { return {}; }
  // Forms the next step (empty when nothing can run).
  virtual const EngineStep& form_step() = 0;
  virtual const EngineStep& step() const = 0;
  // Iterations the decode-only step just formed runs unchanged, if nothing arrives or
  // leaves: at least 1, at most `limit` and until its first sequence finishes. (The
  // cluster forms the step again after each folded segment: formation is exact at every
  // boundary.)
  virtual std::uint32_t steady_iterations(std::uint32_t limit) const = 0;
  // The step ran `iterations` times (its decodes' Sequence::generated already counts
  // them): KV grows, and `outcome` receives its decodes that finished and its prefills
  // that are now computed and produced a token (a prefill chunk may leave a prompt
  // unfinished).
  virtual void complete(std::uint32_t iterations, StepOutcome& outcome) = 0;

  // --- State.
  virtual bool has_waiting() const = 0;
  // KV tokens held, counting those the running step's iterations begun by now take
  // (`begun`: 0 when idle).
  virtual std::uint64_t kv_used_tokens(std::uint32_t begun) const = 0;
  // Leading tokens of the first `tokens` of the request in `slot` this instance has
  // cached (0 without prefix caching); `begun` as for kv_used_tokens, during a
  // decode-only step (the cache then reads as an unfolded run's does now).
  virtual std::uint32_t cached_prefix_tokens(std::uint32_t slot, std::uint32_t tokens, std::uint32_t begun) = 0;
  virtual std::string describe() const = 0;
  // Its queues and KV agree; empty when all is well.
  virtual std::vector<std::string> check_invariants() const = 0;
};

// An empty engine for an instance holding `kv_capacity_tokens` (usable_kv_tokens'), over
// the cluster's sequences.
std::unique_ptr<InstanceEngine> make_engine(const EngineOptions& options, std::uint64_t kv_capacity_tokens,
                                            Sequences& sequences);

}  // namespace meshsim::cluster
