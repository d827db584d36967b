#include "sim/batching/vllm_scheduler.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "sim/batching/kv_span_cache.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::cluster {

VllmScheduler::VllmScheduler(const VllmLimits& limits, std::uint32_t kv_blocks)
    : VllmScheduler(limits, std::make_unique<KvSpanCache>(kv_blocks, limits.block_size, limits.prefix_caching)) {}

VllmScheduler::VllmScheduler(const VllmLimits& limits, std::unique_ptr<KvCache> cache)
    : limits_(limits), cache_(std::move(cache)), waiting_(limits.policy) {
  MESHSIM_CHECK(limits_.block_size > 0 && limits_.max_num_seqs > 0 &&
                    limits_.max_num_batched_tokens >= limits_.max_num_seqs,
                "vLLM limits need block_size > 0 and max_num_batched_tokens >= max_num_seqs > 0");
  if (limits_.host_kv.enabled()) {
    MESHSIM_CHECK(limits_.host_kv.block_tokens % limits_.block_size == 0,
                  "a host tier's block must be a multiple of the GPU block");
    tier_ = std::make_unique<HostKvTier>(limits_.host_kv);
  }
}

void VllmScheduler::enqueue(std::uint32_t slot, const TokenStream& stream, std::uint32_t tokens,
                            std::uint32_t computed, const VllmRank& rank) {
  MESHSIM_CHECK(computed < tokens, "enqueue: a request must have a token left to compute");
  MESHSIM_CHECK(seqs_.count(slot) == 0, "enqueue: slot " + std::to_string(slot) + " is already here");
  const VllmWaitingQueue::Key key{rank, enqueued_++};
  Seq seq;
  seq.stream = &stream;
  seq.tokens = tokens;
  seq.computed = computed;
  seq.table = cache_->open(stream);
  seq.key = key;
  seqs_.emplace(slot, std::move(seq));
  waiting_.push_back(slot, key);
}

// vLLM's allocate_slots: blocks for everything computed and scheduled, the prefix hits
// taken first; refused, changing nothing, when the free blocks (counting the hits that
// are free, which taking removes from the free list) are too few.
bool VllmScheduler::allocate(Seq& seq, std::uint32_t new_tokens, const KvCache::Prefix& hits,
                             bool register_blocks) {
  const std::uint32_t hit_tokens = hits.blocks * limits_.block_size;
  const std::uint32_t need = blocks_for(seq.computed + hit_tokens + new_tokens);
  const std::uint32_t have = cache_->table_blocks(seq.table) + hits.blocks;
  const std::uint32_t fresh = need > have ? need - have : 0;
  if (fresh + hits.free > cache_->free_blocks()) return false;
  if (hits.blocks > 0) cache_->take_prefix(seq.table);
  cache_->grow(seq.table, fresh);
  if (!register_blocks) return true;
  // Full blocks whose tokens are all known and scheduled are registered (vLLM caches them
  // when they are scheduled, not when computed).
  cache_->register_full(seq.table, std::min(seq.computed + hit_tokens + new_tokens, seq.tokens) / limits_.block_size);
  return true;
}

void VllmScheduler::hold_blocks(Seq& seq, std::uint32_t tokens) {
  const std::uint32_t held = cache_->table_blocks(seq.table);
  if (blocks_for(tokens) > held) cache_->grow(seq.table, blocks_for(tokens) - held);
  cache_->register_full(seq.table, tokens / limits_.block_size);
}

std::uint32_t VllmScheduler::cached_prefix_tokens(const TokenStream& stream, std::uint32_t tokens) const {
  if (tokens == 0) return 0;
  return cache_->cached_prefix_blocks(stream, (tokens - 1) / limits_.block_size) * limits_.block_size;
}

void VllmScheduler::preempt(std::uint32_t slot) {
  Seq& seq = seqs_.at(slot);
  cache_->release(seq.table);
  seq.computed = 0;
  waiting_.push_front(slot, seq.key);
  step_.preempted.push_back(slot);
}

// vLLM's victims: FCFS the last admitted; priority the greatest (priority, arrival), the
// first of equals in admission order (Python's max).
std::size_t VllmScheduler::victim() const {
  if (limits_.policy == VllmPolicy::kFcfs) return running_.size() - 1;
  std::size_t worst = 0;
  for (std::size_t i = 1; i < running_.size(); ++i) {
    if (seqs_.at(running_[i]).key.rank > seqs_.at(running_[worst]).key.rank) worst = i;
  }
  return worst;
}

void VllmScheduler::unschedule(std::uint32_t slot, std::uint32_t& budget) {
  auto it = std::find_if(step_.chunks.begin(), step_.chunks.end(), [&](const Chunk& c) { return c.slot == slot; });
  if (it == step_.chunks.end()) return;
  budget += it->tokens;
  if (!it->decodes) step_.prefill_tokens -= it->tokens;
  step_.chunks.erase(it);
}

// A request admitted with nothing computed first takes the cached blocks of its longest
// cached prefix, at most all its tokens but the last (which must be computed to sample).
KvCache::Prefix VllmScheduler::find_hits(const Seq& seq) const {
  if (!fresh(seq)) return {};
  return cache_->find_prefix(seq.table, (seq.tokens - 1) / limits_.block_size);
}

// The tokens a request computes this step: what it has left, capped by the long-prefill
// threshold and by the budget left.
std::uint32_t VllmScheduler::chunk_tokens(std::uint32_t left, std::uint32_t budget) const {
  if (limits_.long_prefill_token_threshold > 0) left = std::min(left, limits_.long_prefill_token_threshold);
  return std::min(left, budget);
}

// vLLM's external lookup after the GPU hit (OffloadingConnector): with a hit of whole host
// blocks the request takes GPU blocks for both hits, unregistered until loaded, and waits
// for the copy.
VllmScheduler::HostAdmission VllmScheduler::try_host_load(std::uint32_t slot, Seq& seq,
                                                          const KvCache::Prefix& hits) {
  const std::uint32_t gpu_hit = hits.blocks * limits_.block_size;
  const std::uint32_t full = seq.tokens / tier_->block_tokens();
  HostKvTier::block_keys(*seq.stream, tier_->block_tokens(), full, seq.host_keys);
  const std::span<const std::uint64_t> keys = std::span(seq.host_keys).first(full);
  const HostKvTier::Hit hit = tier_->lookup(keys, gpu_hit, loading_.size(), limits_.max_num_seqs,
                                            limits_.prefix_caching);
  if (hit.deferred) {
    tier_->count_deferred();
    return HostAdmission::kPutOff;
  }
  if (hit.tokens == 0) return HostAdmission::kNoHit;
  if (!allocate(seq, hit.tokens, hits, false)) return HostAdmission::kNoRoom;
  step_.queried_tokens += seq.tokens;
  step_.hit_tokens += gpu_hit;
  seq.computed += gpu_hit;
  seq.load_first = hit.first;
  seq.load_blocks = hit.blocks;
  seq.load_tokens = hit.tokens;
  seq.load_done = tier_->start_load(keys.subspan(hit.first, hit.blocks), hit.tokens, now_);
  seq.host_stored = std::max(seq.host_stored, hit.first + hit.blocks);  // loaded blocks are not stored again
  waiting_.pop_front();
  loading_.push_back(slot);
  return HostAdmission::kLoading;
}

// The loaded tokens are computed and their full blocks registered; a request whose every
// token was loaded computes its last again, to sample.
void VllmScheduler::finish_load(Seq& seq) {
  tier_->finish_load(std::span(seq.host_keys).subspan(seq.load_first, seq.load_blocks));
  seq.computed += seq.load_tokens;
  cache_->register_full(seq.table, seq.computed / limits_.block_size);
  if (seq.computed == seq.tokens) --seq.computed;
  seq.load_blocks = seq.load_tokens = 0;
}

void VllmScheduler::advance(engine::SimTime now) {
  now_ = now;
  if (loading_.empty()) return;
  std::vector<std::uint32_t> done;
  std::erase_if(loading_, [&](std::uint32_t slot) {
    const bool ended = seqs_.at(slot).load_done <= now;
    if (ended) done.push_back(slot);
    return ended;
  });
  for (const std::uint32_t slot : done) finish_load(seqs_.at(slot));
  // Loaded requests go before the waiting queue, in the queue's own order.
  loaded_.insert(loaded_.end(), done.begin(), done.end());
  std::stable_sort(loaded_.begin(), loaded_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return seqs_.at(a).key < seqs_.at(b).key; });
}

std::optional<engine::SimTime> VllmScheduler::next_load_done() const {
  std::optional<engine::SimTime> first;
  for (const std::uint32_t slot : loading_) {
    const engine::SimTime done = seqs_.at(slot).load_done;
    if (!first || done < *first) first = done;
  }
  return first;
}

void VllmScheduler::store_computed(Seq& seq, std::uint32_t computed) {
  const std::uint32_t full = computed / tier_->block_tokens();
  if (full <= seq.host_stored) return;
  HostKvTier::block_keys(*seq.stream, tier_->block_tokens(), full, seq.host_keys);
  // vLLM retries a store it could not make room for at the next step.
  if (tier_->store(std::span(seq.host_keys).first(full), seq.host_stored)) seq.host_stored = full;
}

// A chunk with c tokens computed after the first iteration has c + j - 1 after iteration
// j: a block fills at each j where that is a multiple of the host block.
void VllmScheduler::store_fold(std::uint32_t iterations) {
  const std::uint32_t b = tier_->block_tokens();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fills;  // (iteration, chunk)
  for (std::uint32_t c = 0; c < step_.chunks.size(); ++c) {
    const std::uint32_t after_first = seqs_.at(step_.chunks[c].slot).computed - (iterations - 1);
    const std::uint32_t to_boundary = (b - after_first % b) % b;
    for (std::uint32_t j = 1 + (to_boundary == 0 ? b : to_boundary); j <= iterations; j += b) fills.emplace_back(j, c);
  }
  std::sort(fills.begin(), fills.end());
  for (const auto& [j, c] : fills) {
    Seq& seq = seqs_.at(step_.chunks[c].slot);
    store_computed(seq, seq.computed - (iterations - j));
  }
}

const VllmScheduler::Step& VllmScheduler::schedule() {
  form_step();
  residues_.clear();
  if (step_.decode_only()) {
    for (const Chunk& chunk : step_.chunks) residues_.push_back(chunk.context % limits_.block_size);
    std::sort(residues_.begin(), residues_.end());
  }
  return step_;
}

void VllmScheduler::form_step() {
  step_.chunks.clear();
  step_.preempted.clear();
  step_.prefill_tokens = 0;
  step_.queried_tokens = step_.hit_tokens = 0;
  materialized_ = 1;
  std::uint32_t budget = limits_.max_num_batched_tokens;
  const auto take = [&](std::uint32_t slot, const Seq& seq, std::uint32_t tokens) {
    const bool samples = seq.computed + tokens == seq.tokens;
    const bool decodes = tokens == 1 && samples;
    step_.chunks.push_back(Chunk{slot, tokens, seq.computed, samples, decodes});
    if (!decodes) step_.prefill_tokens += tokens;
    budget -= tokens;
  };
  // Running requests, in admission order, preempting the policy's victims for blocks.
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const std::uint32_t slot = running_[i];
    Seq& seq = seqs_.at(slot);
    const std::uint32_t tokens = chunk_tokens(seq.tokens - seq.computed, budget);
    if (tokens == 0) continue;
    bool allocated = false;
    while (!(allocated = allocate(seq, tokens, KvCache::Prefix{}))) {
      const std::size_t v = victim();
      const std::uint32_t victim_slot = running_[v];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(v));
      if (v < i) {  // scheduled earlier in this step: its chunk leaves it
        unschedule(victim_slot, budget);
        --i;
      }
      preempt(victim_slot);
      if (victim_slot == slot) break;
    }
    if (!allocated) break;
    take(slot, seq, tokens);
  }
  if (!step_.preempted.empty()) return;
  // Requests whose host loads ended hold their blocks: they go first.
  bool blocked = false;
  while (!loaded_.empty() && budget > 0 && running_.size() < limits_.max_num_seqs) {
    const std::uint32_t slot = loaded_.front();
    Seq& seq = seqs_.at(slot);
    const std::uint32_t tokens = chunk_tokens(seq.tokens - seq.computed, budget);
    if (!allocate(seq, tokens, KvCache::Prefix{})) {
      blocked = true;
      break;
    }
    loaded_.erase(loaded_.begin());
    running_.push_back(slot);
    take(slot, seq, tokens);
  }
  // Waiting requests in the policy's order; the first that does not fit stops admission.
  put_off_.clear();
  while (!blocked && !waiting_.empty() && budget > 0 && running_.size() < limits_.max_num_seqs) {
    const std::uint32_t slot = waiting_.front();
    Seq& seq = seqs_.at(slot);
    const bool looked_up = fresh(seq);
    const KvCache::Prefix hits = find_hits(seq);
    const std::uint32_t hit_tokens = hits.blocks * limits_.block_size;
    if (tier_ && looked_up) {
      const HostAdmission host = try_host_load(slot, seq, hits);
      if (host == HostAdmission::kNoRoom) break;
      if (host == HostAdmission::kPutOff) {
        waiting_.pop_front();
        put_off_.push_back(slot);
      }
      if (host != HostAdmission::kNoHit) continue;
    }
    const std::uint32_t tokens = chunk_tokens(seq.tokens - seq.computed - hit_tokens, budget);
    if (!allocate(seq, tokens, hits)) break;
    if (looked_up) {
      step_.queried_tokens += seq.tokens;
      step_.hit_tokens += hit_tokens;
    }
    seq.computed += hit_tokens;
    waiting_.pop_front();
    running_.push_back(slot);
    take(slot, seq, tokens);
  }
  // Lookups put off keep their places at the queue's front.
  for (auto it = put_off_.rbegin(); it != put_off_.rend(); ++it) waiting_.push_front(*it, seqs_.at(*it).key);
  // The first loaded request blocked with nothing running or loading would wait for good
  // on the blocks the others hold: they give them back (they stay cached), as a preemption
  // would, and wait again; the step is formed again.
  if (blocked && running_.empty() && loading_.empty()) {
    while (loaded_.size() > 1) {
      const std::uint32_t slot = loaded_.back();
      loaded_.pop_back();
      Seq& seq = seqs_.at(slot);
      cache_->release(seq.table);
      seq.computed = 0;
      waiting_.push_front(slot, seq.key);
      step_.preempted.push_back(slot);
    }
  }
}

// Blocks of iterations 1..k-1 of a steady decode step: a request with c tokens computed
// before the step computes token c + j in iteration j, which opens a block when it is a
// multiple of the block size.
std::uint64_t VllmScheduler::later_allocations(std::uint32_t k) const {
  // With r = c mod b, a request opens (r + k - 1) / b blocks; writing k - 1 = q b + m, that
  // is q, plus one when r >= b - m.
  const std::uint32_t b = limits_.block_size;
  const std::uint32_t q = (k - 1) / b;
  const std::uint32_t m = (k - 1) % b;
  const auto opening_one_more = residues_.end() - std::lower_bound(residues_.begin(), residues_.end(), b - m);
  return std::uint64_t{q} * residues_.size() + static_cast<std::uint64_t>(opening_one_more);
}

// Whether the waiting queue's head would be admitted with `free_blocks` free and `budget`
// tokens left (the same rule as schedule()), or might be at a later boundary: true as well
// when some of its prefix hits sit in free blocks, since a run of allocations can evict one
// and cut its chain of hits short, which with a chunk capped by the budget can leave it
// needing fewer blocks than the allocation freed.
bool VllmScheduler::waiting_head_may_fit(std::uint32_t free_blocks, std::uint32_t budget) const {
  if (waiting_.empty() || budget == 0 || running_.size() >= limits_.max_num_seqs) return false;
  const Seq& seq = seqs_.at(waiting_.front());
  const KvCache::Prefix hits = find_hits(seq);
  if (hits.free > 0) return true;
  const std::uint32_t computed = seq.computed + hits.blocks * limits_.block_size;
  const std::uint32_t tokens = chunk_tokens(seq.tokens - computed, budget);
  return blocks_for(computed + tokens) - hits.blocks <= free_blocks;
}

std::uint32_t VllmScheduler::steady_iterations(std::uint32_t limit) const {
  if (limit <= 1 || !step_.decode_only() || !step_.preempted.empty() || step_.chunks.size() != running_.size()) {
    return 1;
  }
  // With a host tier every step's lookups touch the waiting requests' host blocks, which
  // a folded run would skip: it folds only with nothing waiting.
  if (tier_ && !waiting_.empty()) return 1;
  // The waiting head, blocked at the next boundary with its hits (if any) all held by
  // running requests, stays blocked: free blocks only fall and its hits stay.
  const std::uint32_t budget = limits_.max_num_batched_tokens - static_cast<std::uint32_t>(running_.size());
  const std::uint64_t free_now = cache_->free_blocks();
  const std::uint64_t next = later_allocations(2);
  if (next > free_now || waiting_head_may_fit(static_cast<std::uint32_t>(free_now - next), budget)) return 1;
  // The longest run whose later allocations all succeed (monotone in k).
  std::uint32_t low = 2, high = limit;
  while (low < high) {
    const std::uint32_t mid = low + (high - low + 1) / 2;
    if (later_allocations(mid) <= free_now) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

void VllmScheduler::complete(std::uint32_t iterations) {
  MESHSIM_CHECK(iterations >= 1, "complete: at least one iteration");
  for (const Chunk& chunk : step_.chunks) {
    Seq& seq = seqs_.at(chunk.slot);
    seq.computed += chunk.tokens;
    if (chunk.samples) ++seq.tokens;
    if (tier_) store_computed(seq, seq.computed);
  }
  if (iterations == 1) return;
  for (const Chunk& chunk : step_.chunks) {
    // Later iterations of a steady decode step: one token each, a block when one fills.
    Seq& seq = seqs_.at(chunk.slot);
    seq.computed += iterations - 1;
    seq.tokens += iterations - 1;
    hold_blocks(seq, seq.computed);
  }
  if (tier_) store_fold(iterations);
}

std::uint32_t VllmScheduler::used_blocks(std::uint32_t begun) const {
  const std::uint32_t used = cache_->used_blocks();
  if (begun <= materialized_ || !step_.decode_only()) return used;
  return used + static_cast<std::uint32_t>(later_allocations(begun) - later_allocations(materialized_));
}

// Iteration j of the step computes token context + j - 1 of each chunk and, scheduled at
// its start, holds blocks for context + j tokens, its full ones cached.
void VllmScheduler::materialize(std::uint32_t begun) {
  if (begun <= materialized_ || !step_.decode_only()) return;
  for (const Chunk& chunk : step_.chunks) {
    hold_blocks(seqs_.at(chunk.slot), chunk.context + begun);
  }
  materialized_ = begun;
}

void VllmScheduler::remove(std::uint32_t slot) {
  auto it = seqs_.find(slot);
  MESHSIM_CHECK(it != seqs_.end(), "remove: slot " + std::to_string(slot) + " is not here");
  cache_->close(it->second.table);
  if (tier_) {
    // A load in progress ends with the request (its blocks unpinned); its stored blocks
    // are touched as it leaves.
    const Seq& seq = it->second;
    if (seq.load_blocks > 0) tier_->finish_load(std::span(seq.host_keys).subspan(seq.load_first, seq.load_blocks));
    tier_->touch(std::span(seq.host_keys).first(std::min<std::size_t>(seq.host_stored, seq.host_keys.size())));
  }
  const VllmWaitingQueue::Key key = it->second.key;
  seqs_.erase(it);
  if (auto r = std::find(running_.begin(), running_.end(), slot); r != running_.end()) {
    running_.erase(r);
    return;
  }
  for (auto* list : {&loading_, &loaded_}) {
    if (auto l = std::find(list->begin(), list->end(), slot); l != list->end()) {
      list->erase(l);
      return;
    }
  }
  waiting_.remove(slot, key);
}

std::vector<std::uint32_t> VllmScheduler::slots() const {
  std::vector<std::uint32_t> all(running_.begin(), running_.end());
  for (std::uint32_t slot : waiting_.slots()) all.push_back(slot);
  all.insert(all.end(), loaded_.begin(), loaded_.end());
  all.insert(all.end(), loading_.begin(), loading_.end());
  return all;
}

std::vector<std::string> VllmScheduler::check_invariants() const {
  std::vector<std::string> problems = cache_->check_invariants();
  const std::unordered_set<std::uint32_t> running(running_.begin(), running_.end());
  for (const auto& [slot, seq] : seqs_) {
    const std::string name = "request slot " + std::to_string(slot);
    // Running, or loaded: blocks for what it computed. Loading: for its GPU hit and the load.
    // Waiting: none (a prompt's KV on its way from a prompt instance gets them when
    // admitted).
    const std::uint32_t held = cache_->table_blocks(seq.table);
    bool ok = held >= blocks_for(seq.computed);
    if (seq.load_blocks > 0) {
      ok = held == blocks_for(seq.computed + seq.load_tokens);
    } else if (running.count(slot) == 0 && std::find(loaded_.begin(), loaded_.end(), slot) == loaded_.end()) {
      ok = held == 0;
    }
    if (!ok) problems.push_back(name + ": its block table does not match its computed tokens");
    if (seq.computed >= seq.tokens) problems.push_back(name + ": nothing left to compute");
  }
  if (running_.size() + waiting() + loading() != seqs_.size()) {
    problems.push_back("queues disagree with the requests");
  }
  for (std::string& problem : waiting_.check_invariants()) problems.push_back(std::move(problem));
  if (running_.size() > limits_.max_num_seqs) problems.push_back("more running than max_num_seqs");
  return problems;
}

}  // namespace meshsim::cluster
