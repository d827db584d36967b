// SplitwiseSim's batch formation, KV admission and eviction on one instance.
//
// Folding is exact by construction: steady_iterations says a decode batch runs on for
// more than one iteration only while the batch formation here would pick exactly the same
// batch at every boundary (steady_after_one_iteration), if nothing arrives.

#include "sim/batching/splitwise_engine.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

SplitwiseEngine::SplitwiseEngine(const BatchingConfig& limits, KvAllocation allocation,
                                 std::uint64_t kv_capacity_tokens, Sequences& sequences)
    : limits_(limits), allocation_(allocation), capacity_(kv_capacity_tokens), seqs_(sequences) {}

// KV a prompt reserves when its prefill starts: its tokens and the first output token,
// or, rerun after a reserve-mode eviction, everything it will ever need.
std::uint64_t SplitwiseEngine::prompt_kv_need(const Sequence& s) const {
  if (s.reserve_all) return std::uint64_t{s.prompt_tokens} + s.output_tokens;
  return std::uint64_t{s.prefill_tokens()} + 1;
}

// KV a sequence ready to decode must still reserve here before it joins a batch.
// Reserve: the rest of prompt + output (all of it when shipped from a prompt instance).
// On demand: its prompt and first token when shipped here, nothing when it holds them.
std::uint64_t SplitwiseEngine::decode_kv_need(const Sequence& s) const {
  if (!on_demand()) return std::uint64_t{s.prompt_tokens} + s.output_tokens - s.kv_reserved;
  return s.kv_reserved > 0 ? 0 : std::uint64_t{s.prompt_tokens} + 1;
}

void SplitwiseEngine::decode_here(std::uint32_t slot) {
  (decode_kv_need(seqs_[slot]) == 0 ? holders_ : newcomers_).push_back(slot);
}

void SplitwiseEngine::remove(std::uint32_t slot) {
  Sequence& s = seqs_[slot];
  kv_used_ -= s.kv_reserved;
  s.kv_reserved = 0;
}

std::vector<std::uint32_t> SplitwiseEngine::evacuate() {
  std::vector<std::uint32_t> slots(step_.decode.begin(), step_.decode.end());
  for (auto* queue : {&starved_, &paused_, &holders_, &newcomers_, &prompts_}) {
    queue->append_to(slots);
    queue->clear();
  }
  step_.decode.clear();
  return slots;
}

const EngineStep& SplitwiseEngine::form_step() {
  step_.recompute_started.clear();
  for (;;) {
    const bool evicted = form_batch();
    if (!step_.empty()) break;
    // Evicting the whole batch freed memory for the recomputations: select again.
    if (evicted) continue;
    // Waiting work and nothing to run: no event would ever change that here, unless
    // sequences holding KV give it up (the cluster reports a step left empty so).
    if (!has_waiting() || !break_kv_deadlock()) break;
  }
  step_.prefill_work = PrefillWork{};
  for (const std::uint32_t slot : step_.prefill) {
    const std::uint32_t tokens = seqs_[slot].prefill_tokens();
    step_.prefill_work.tokens += tokens;
    ++step_.prefill_work.sequences;
    step_.prefill_work.squared_tokens += static_cast<double>(tokens) * tokens;
  }
  step_.decode_work = DecodeWork{static_cast<std::uint32_t>(step_.decode.size()), 0};
  for (const std::uint32_t slot : step_.decode) {
    step_.decode_work.context_tokens += std::uint64_t{seqs_[slot].prompt_tokens} + seqs_[slot].generated;
  }
  return step_;
}

// One iteration's batch, in SplitwiseSim's order: (1) decoding sequences left out of
// max_preemptions batches, (2) prompts, first come first served, while their tokens fit
// the budget (one over it runs alone) and their KV fits (on demand leaving a token free
// for each sequence decoding here, or admitting them would only evict one), (3) other
// paused sequences, (4) the previous batch (a sequence that no longer fits is paused and
// counted in `pauses`), (5) sequences ready to decode: those holding their KV, then
// newcomers while their KV fits. On demand, (6) the latest arrivals among the decoding
// sequences are evicted until each can take its next token. Returns whether it evicted.
bool SplitwiseEngine::form_batch() {
  previous_.clear();
  previous_.swap(step_.decode);
  step_.prefill.clear();
  std::uint32_t size = 0;
  std::uint64_t tokens = 0;
  const auto room = [&](std::uint64_t more) {
    return size < limits_.max_batch_size && (size == 0 || tokens + more <= limits_.max_batch_tokens);
  };
  const auto take_decode = [&](SlotQueue& queue) {
    step_.decode.push_back(queue.front());
    queue.pop_front();
    ++size;
    ++tokens;
  };
  while (!starved_.empty() && room(1)) take_decode(starved_);
  const std::uint64_t keep_free = on_demand() ? previous_.size() + decoding() : 0;
  while (!prompts_.empty()) {
    const std::uint32_t slot = prompts_.front();
    Sequence& s = seqs_[slot];
    const std::uint32_t pass = s.prefill_tokens();
    const std::uint64_t need = prompt_kv_need(s);
    if (!room(pass) || kv_used_ + need + keep_free > capacity_) break;
    prompts_.pop_front();
    kv_used_ += need;
    s.kv_reserved += need;
    step_.prefill.push_back(slot);
    ++size;
    tokens += pass;
  }
  while (!paused_.empty() && room(1)) take_decode(paused_);
  for (const std::uint32_t slot : previous_) {
    if (room(1)) {
      step_.decode.push_back(slot);
      ++size;
      ++tokens;
    } else {
      // Left out: paused for this iteration (its KV stays reserved).
      Sequence& s = seqs_[slot];
      ++s.pauses;
      (s.pauses >= limits_.max_preemptions ? starved_ : paused_).push_back(slot);
    }
  }
  while (!holders_.empty() && room(1)) take_decode(holders_);
  while (!newcomers_.empty() && room(1)) {
    Sequence& s = seqs_[newcomers_.front()];
    const std::uint64_t need = decode_kv_need(s);
    if (kv_used_ + need > capacity_) break;
    kv_used_ += need;
    s.kv_reserved += need;
    take_decode(newcomers_);
  }
  if (!on_demand() || kv_used_ + step_.decode.size() <= capacity_) return false;
  evict_latest();
  return true;
}

// On demand: every decoding sequence takes one more KV token per iteration. Evicts the
// most recently arrived sequences of the batch until the rest fit (vLLM's choice: the
// oldest requests keep making progress).
void SplitwiseEngine::evict_latest() {
  std::vector<std::uint32_t> by_arrival = step_.decode;
  std::sort(by_arrival.begin(), by_arrival.end(),
            [&](std::uint32_t a, std::uint32_t b) { return seqs_[a].id > seqs_[b].id; });
  std::size_t batch = step_.decode.size();
  std::size_t evicted = 0;
  while (batch > 0 && kv_used_ + batch > capacity_) {
    evict_for_recompute(by_arrival[evicted++]);
    --batch;
  }
  // Keep the rest in batch order.
  std::erase_if(step_.decode, [&](std::uint32_t slot) { return seqs_[slot].recomputing; });
}

void SplitwiseEngine::evict_for_recompute(std::uint32_t slot) {
  Sequence& s = seqs_[slot];
  kv_used_ -= s.kv_reserved;
  s.kv_reserved = 0;
  s.recomputing = true;
  s.reserve_all = allocation_ == KvAllocation::kReserve;
  ++s.kv_evictions;
  step_.recompute_started.push_back(slot);
  prompts_.push_front(slot);
}

// Reserve mode: an idle instance whose KV is held by sequences prefilled here that wait
// for the rest of their reservation would wait forever (nothing runs to free memory).
// The latest of them are evicted, to be recomputed reserving all they need at once, until
// the oldest can reserve the rest; it then decodes to the end. Returns whether anything
// was evicted. On demand this state cannot arise: sequences that hold KV always run.
bool SplitwiseEngine::break_kv_deadlock() {
  if (newcomers_.empty()) return false;
  const std::uint64_t head_need = decode_kv_need(seqs_[newcomers_.front()]);
  bool evicted = false;
  std::vector<std::uint32_t> kept;  // back to front
  while (newcomers_.size() > 1 && kv_used_ + head_need > capacity_) {
    const std::uint32_t slot = newcomers_.back();
    newcomers_.pop_back();
    if (seqs_[slot].kv_reserved == 0) {
      kept.push_back(slot);
      continue;
    }
    evict_for_recompute(slot);
    evicted = true;
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) newcomers_.push_back(*it);
  return evicted;
}

// Whether the batch just formed (decode only) would be formed again, unchanged, at the
// next iteration boundary if no new work arrives. It is, exactly when after one more
// iteration: (1, 3) no sequence is paused; (2) the next prompt's KV does not fit (it
// would be tried first, with the budget empty); (4) the batch still fits, which it does
// as it was formed alone; (5) no sequence ready to decode could join; (6) no eviction is
// due. Then, if nothing arrives, it is formed again at every boundary: in reserve mode
// KV use does not change, and on demand it only grows, which keeps (2) and (5) false,
// while steady_iterations stops before (6) becomes due.
bool SplitwiseEngine::steady_after_one_iteration() const {
  if (!starved_.empty() || !paused_.empty()) return false;
  const std::uint64_t batch = step_.decode.size();
  const std::uint64_t kv_next = kv_used_ + (on_demand() ? batch : 0);
  if (!prompts_.empty()) {
    const std::uint64_t keep_free = on_demand() ? batch + holders_.size() : 0;
    if (kv_next + prompt_kv_need(seqs_[prompts_.front()]) + keep_free <= capacity_) return false;
  }
  const bool room = batch < limits_.max_batch_size && batch + 1 <= limits_.max_batch_tokens;
  if (room) {
    if (!holders_.empty()) return false;
    if (!newcomers_.empty() && kv_next + decode_kv_need(seqs_[newcomers_.front()]) <= capacity_) return false;
  }
  return !on_demand() || kv_next + batch <= capacity_;
}

// Iterations the decode batch just formed runs before the unfolded model would form a
// different one: if steady, until its first sequence finishes (and on demand, until an
// eviction is due); else one.
std::uint32_t SplitwiseEngine::steady_iterations(std::uint32_t limit) const {
  if (limit <= 1 || !steady_after_one_iteration()) return 1;
  std::uint64_t length = limit;
  for (const std::uint32_t slot : step_.decode) {
    length = std::min<std::uint64_t>(length, seqs_[slot].output_tokens - seqs_[slot].generated);
  }
  if (on_demand()) {
    // Iteration i (from 0) starts with kv_used + i * batch tokens held and needs batch more.
    length = std::min<std::uint64_t>(length, (capacity_ - kv_used_) / step_.decode.size());
  }
  MESHSIM_CHECK(length >= 1, "an iteration must make progress");
  return static_cast<std::uint32_t>(length);
}

void SplitwiseEngine::complete(std::uint32_t iterations, StepOutcome& outcome) {
  if (on_demand()) kv_used_ += std::uint64_t{iterations} * step_.decode.size();
  // Those still decoding are the next formation's previous batch.
  std::erase_if(step_.decode, [&](std::uint32_t slot) {
    Sequence& s = seqs_[slot];
    if (on_demand()) s.kv_reserved += iterations;
    if (s.generated < s.output_tokens) return false;
    outcome.finished.push_back(slot);
    return true;
  });
  outcome.prefilled.insert(outcome.prefilled.end(), step_.prefill.begin(), step_.prefill.end());
  step_.prefill.clear();
}

// On demand: the KV the running step's iterations begun by now take (counted in kv_used_
// when it completes): the unfolded model takes them as each iteration is formed.
std::uint64_t SplitwiseEngine::kv_used_tokens(std::uint32_t begun) const {
  if (begun == 0 || !on_demand()) return kv_used_;
  return kv_used_ + std::uint64_t{begun} * step_.decode.size();
}

std::string SplitwiseEngine::describe() const {
  return std::to_string(prompts_.size()) + " waiting for prefill, " +
         std::to_string(step_.decode.size() + step_.prefill.size()) + " in the batch, " +
         std::to_string(starved_.size() + paused_.size()) + " paused, " +
         std::to_string(holders_.size() + newcomers_.size()) + " ready to decode (" +
         std::to_string(newcomers_.size()) + " waiting for KV)";
}

std::vector<std::string> SplitwiseEngine::check_invariants() const {
  std::vector<std::string> problems;
  std::vector<std::uint32_t> here(step_.decode.begin(), step_.decode.end());
  here.insert(here.end(), step_.prefill.begin(), step_.prefill.end());
  for (const auto* queue : {&starved_, &paused_, &holders_, &newcomers_, &prompts_}) queue->append_to(here);
  std::uint64_t reserved = 0;
  for (const std::uint32_t slot : here) reserved += seqs_[slot].kv_reserved;
  std::sort(here.begin(), here.end());
  if (std::adjacent_find(here.begin(), here.end()) != here.end()) problems.push_back("a request is queued twice");
  if (reserved != kv_used_) {
    problems.push_back("KV held (" + std::to_string(kv_used_) + " tokens) is not what its requests reserved (" +
                       std::to_string(reserved) + ")");
  }
  if (kv_used_ > capacity_) problems.push_back("KV held exceeds the capacity");
  return problems;
}

}  // namespace meshsim::cluster
