#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/batching/kv_cache.hpp"
#include "sim/batching/batching_options.hpp"
#include "sim/batching/host_kv_tier.hpp"
#include "sim/batching/token_stream.hpp"
#include "sim/batching/vllm_waiting_queue.hpp"

namespace meshsim::cluster {

// One instance's batch formation as vLLM's v1 scheduler does it, step by step: a token
// budget of max_num_batched_tokens per step; running requests first, in the order they
// were admitted, each taking the tokens it still has to compute (1 when decoding; the rest
// of its prompt, in chunks, when prefilling); then waiting requests, in the policy's order
// (FCFS: arrival; priority: priority, then arrival; VllmWaitingQueue), while the budget
// lasts and fewer than max_num_seqs run, their prompts chunked to what is left of the
// budget (chunked prefill). KV memory is allocated in blocks as tokens are scheduled
// (KvCache); a running request that cannot get a block preempts another running request
// (its blocks are freed and it waits again, to recompute prompt and output so far): FCFS
// the most recently admitted, priority the least urgent by (priority, arrival), whose
// chunk leaves the step if it was already scheduled in it. No waiting request is admitted
// in a step that preempted, and none ever preempts a running one; the first waiting
// request that does not fit stops admission. With prefix caching, a request admitted with
// nothing computed first takes the cached full blocks of its longest cached prefix (at
// most all its tokens but the last).
//
// With a host tier (VllmLimits::host_kv, HostKvTier), a waiting request admitted with
// nothing computed looks up, after its GPU hit, its next whole blocks stored in host
// memory: with a hit it takes GPU blocks for both hits and leaves the queue to wait for the
// load (vLLM's WAITING_FOR_REMOTE_KVS), taking none of the step's budget; a lookup put off
// leaves the request where it was and the next waiting request goes on. From the first
// advance() at or after the load's end it is admitted before the waiting queue (it holds
// its blocks; vLLM keeps it in its place in the queue) with the loaded tokens computed
// (all its tokens but the last at most). Every full block a step computes is stored.
//
// Simplified against vLLM: one KV cache group (no sliding window or hybrid models), no
// speculative decoding, no structured output, no encoder inputs; a step's tokens are known
// when it is scheduled (no async scheduling). Timing is the caller's (LlmCluster prices
// each step with its PerfModel).
//
// Costs: schedule() O(running log running + admitted) plus the KV cache's work, which grows with the
// runs and spans of the requests' tokens, not their blocks (KvSpanCache); complete()
// O(chunks) plus the cache's; remove() O(running) plus the waiting queue's; priority
// victims O(running) each.
class VllmScheduler {
 public:
  // A KvSpanCache of `kv_blocks` blocks.
  VllmScheduler(const VllmLimits& limits, std::uint32_t kv_blocks);
  // On a cache of the caller's (a test's slow twin), of limits.block_size tokens a block.
  VllmScheduler(const VllmLimits& limits, std::unique_ptr<KvCache> cache);

  // Joins the waiting queue (its back under FCFS, its rank under priority): `tokens` known
  // so far (prompt and the output tokens it has), `computed` of them already in KV here (0,
  // or the prompt when its KV arrives from a prompt instance). `stream` names its tokens
  // and must outlive its stay here.
  void enqueue(std::uint32_t slot, const TokenStream& stream, std::uint32_t tokens, std::uint32_t computed,
               const VllmRank& rank = {});

  struct Chunk {
    std::uint32_t slot = 0;
    std::uint32_t tokens = 0;   // computed by this step
    std::uint32_t context = 0;  // already computed before them (prefix hits included)
    bool samples = false;       // its last known token is among them: the step samples a new one
    // One token that samples: a decode step, or the last token of a prefill or recomputation
    // whose other tokens hit the prefix cache (the caller, who knows which, tells them apart).
    bool decodes = false;
  };
  struct Step {
    std::vector<Chunk> chunks;              // running first, in admission order, then those admitted
    std::vector<std::uint32_t> preempted;   // freed and sent back to wait this step
    std::uint32_t prefill_tokens = 0;       // of chunks that do not `decode`
    // Prefix caching: tokens of the requests admitted with nothing computed, and of those
    // found cached.
    std::uint64_t queried_tokens = 0, hit_tokens = 0;
    bool decode_only() const { return prefill_tokens == 0; }
  };
  // The time is now (for host loads; the scheduler keeps no clock of its own): loads that
  // ended by now give their requests back to the waiting queue.
  void advance(engine::SimTime now);
  // When the earliest host load in progress ends (none without one).
  std::optional<engine::SimTime> next_load_done() const;
  // The host tier's counts since the last call (zero without a tier).
  HostKvCounts take_host_counts() { return tier_ ? tier_->take_counts() : HostKvCounts{}; }

  // Forms the next step; chunks empty when nothing can run.
  const Step& schedule();
  const Step& step() const { return step_; }
  // Iterations the decode-only step just scheduled would be formed again, unchanged, if
  // nothing else happened (no arrival, nothing leaving): at most `limit` (the caller's:
  // until the first request finishes), fewer when a block allocation would fail (a
  // preemption) or a waiting request would be admitted; 1 when the step is not steady.
  // O(log(limit) * log(running)), on the residues schedule() sorted.
  std::uint32_t steady_iterations(std::uint32_t limit) const;
  // The scheduled step has run `iterations` times (more than once only within
  // steady_iterations): tokens are computed, every chunk that samples gains a token, and
  // the blocks of the iterations after the first are allocated now.
  void complete(std::uint32_t iterations);
  // KV blocks in use now, counting those the running step's iterations begun by now
  // (`begun`, at least 1) take.
  std::uint32_t used_blocks(std::uint32_t begun) const;
  // Allocates (and caches) now the blocks of the running steady decode step's iterations
  // begun by now, as an unfolded run has by this time, so the prefix cache can be read
  // mid-run (prefix_affinity routing); complete() then allocates only the rest.
  void materialize(std::uint32_t begun);

  // Leaves the instance (finished, or moved elsewhere): its blocks are released, last
  // first, and stay cached.
  void remove(std::uint32_t slot);
  // Every request here, running (admission order) then waiting (queue order), without
  // touching them: for evacuation, which removes each.
  std::vector<std::uint32_t> slots() const;

  // Leading tokens of a request of `tokens` known tokens (its stream) this instance holds in
  // its prefix cache, in whole blocks, as admission would take them (at most all but the
  // last; blocks of tokens only the request has are not looked up: it has none here).
  std::uint32_t cached_prefix_tokens(const TokenStream& stream, std::uint32_t tokens) const;

  bool empty() const { return seqs_.empty(); }
  std::size_t waiting() const { return waiting_.size() + loaded_.size(); }
  std::size_t loading() const { return loading_.size(); }
  std::size_t running() const { return running_.size(); }
  bool holds(std::uint32_t slot) const { return seqs_.count(slot) == 1; }
  std::uint32_t computed(std::uint32_t slot) const { return seqs_.at(slot).computed; }
  const KvCache& cache() const { return *cache_; }
  const VllmLimits& limits() const { return limits_; }

  // Block tables, reference counts and queues agree; empty when all is well. O(blocks).
  std::vector<std::string> check_invariants() const;

 private:
  struct Seq {
    const TokenStream* stream = nullptr;
    std::uint32_t tokens = 0;
    std::uint32_t computed = 0;
    std::uint32_t table = 0;  // its block table in cache_
    VllmWaitingQueue::Key key;
    // With a host tier: keys of its full offloaded blocks so far, how many of them are
    // stored, and the load it waits for (load_blocks > 0).
    std::vector<std::uint64_t> host_keys;
    std::uint32_t host_stored = 0;
    std::uint32_t load_first = 0, load_blocks = 0, load_tokens = 0;
    engine::SimTime load_done;
  };
  enum class HostAdmission { kNoHit, kLoading, kPutOff, kNoRoom };
  std::uint32_t blocks_for(std::uint32_t tokens) const { return (tokens + limits_.block_size - 1) / limits_.block_size; }
  // Nothing computed and no blocks held: admitting it looks its prefix up (a request whose
  // whole prompt was loaded holds blocks with nothing computed, to sample its last token).
  bool fresh(const Seq& seq) const { return seq.computed == 0 && cache_->table_blocks(seq.table) == 0; }
  // The cached prefix a request admitted with nothing computed first takes (none otherwise).
  KvCache::Prefix find_hits(const Seq& seq) const;
  std::uint32_t chunk_tokens(std::uint32_t left, std::uint32_t budget) const;
  // Without `register_blocks` (a host load's blocks) the full blocks are registered when
  // the load ends.
  bool allocate(Seq& seq, std::uint32_t new_tokens, const KvCache::Prefix& hits, bool register_blocks = true);
  // The host tier's part of admitting the waiting queue's head (vLLM's external lookup).
  HostAdmission try_host_load(std::uint32_t slot, Seq& seq, const KvCache::Prefix& hits);
  void finish_load(Seq& seq);
  // Stores the request's full blocks among its first `computed` tokens not stored yet.
  void store_computed(Seq& seq, std::uint32_t computed);
  // Stores the blocks a steady decode step's iterations 2..`iterations` fill, iteration by
  // iteration, as an unfolded run does.
  void store_fold(std::uint32_t iterations);
  // Blocks for the first `tokens` tokens, the full ones registered.
  void hold_blocks(Seq& seq, std::uint32_t tokens);
  void preempt(std::uint32_t slot);
  // The running request a block shortage preempts, by the policy: an index into running_.
  std::size_t victim() const;
  // Takes a running request's chunk out of the step being formed (a priority victim that
  // was scheduled before the shortage), returning its tokens to `budget`.
  void unschedule(std::uint32_t slot, std::uint32_t& budget);
  // schedule()'s work before the step's residues are indexed.
  void form_step();
  // Blocks iterations 1..k-1 (k >= 1) of the decode-only step allocate: O(log running).
  std::uint64_t later_allocations(std::uint32_t k) const;
  bool waiting_head_may_fit(std::uint32_t free_blocks, std::uint32_t budget) const;

  VllmLimits limits_;
  std::unique_ptr<KvCache> cache_;
  std::unordered_map<std::uint32_t, Seq> seqs_;
  std::vector<std::uint32_t> running_;
  VllmWaitingQueue waiting_;
  std::uint64_t enqueued_ = 0;  // requests enqueued so far: the next one's order
  Step step_;
  // The decode-only step's chunk contexts modulo the block size, ascending: what
  // later_allocations counts (empty for other steps).
  std::vector<std::uint32_t> residues_;
  std::uint32_t materialized_ = 1;  // iterations of step_ whose blocks are allocated
  std::unique_ptr<HostKvTier> tier_;   // with limits_.host_kv
  std::vector<std::uint32_t> loading_;  // waiting for host loads, in the order they started
  std::vector<std::uint32_t> loaded_;   // their loads ended: admitted first, in the queue's order
  std::vector<std::uint32_t> put_off_;  // form_step's put-off lookups
  engine::SimTime now_;
};

}  // namespace meshsim::cluster
