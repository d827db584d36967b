// LlmCluster's iteration loop: batch formation (SplitwiseSim's rules), KV admission and
// eviction, and folded runs of decode iterations.
//
// Folding is exact by construction: a batch of decode sequences runs on as one event only
// while the batch formation of the unfolded model would pick exactly the same batch at
// every boundary (steady_after_one_iteration), and a run is cut at the first boundary
// at or after the moment new work arrives. Iteration ends are ranked events, so at equal
// times every run sees arrivals and transfers first, then instances in index order.

#include <algorithm>
#include <cmath>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/llm_cluster_state.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::cluster {

SimTime LlmCluster::iteration_time(const Hardware& hw, const PrefillWork& prefill, const DecodeWork& decode) {
  // Whole microseconds, at least one, so every iteration moves the clock.
  const double ms = hw.perf->iteration_ms(prefill, decode);
  if (!(ms >= 0 && ms <= kMaxIterationMs)) {
    throw RangeError("the performance model prices an iteration (" + std::to_string(prefill.tokens) +
                     " prompt tokens, " + std::to_string(decode.batch) + " decoding sequences) at " +
                     number_text(ms) + " ms, outside [0, " + number_text(kMaxIterationMs) +
                     "] ms: check the deployment's hardware, model and performance figures");
  }
  // std::llround's value (halves away from zero), without a call into libm on the path
  // that prices every iteration: a non-negative double's fraction is exact.
  const double us = ms * 1000.0;
  auto whole = static_cast<std::int64_t>(us);
  if (us - static_cast<double>(whole) >= 0.5) ++whole;
  return SimTime::from_us(std::max<std::int64_t>(1, whole));
}

// An iteration's useful work: the time its FLOPs and bytes would take at the GPUs' peak
// compute or memory bandwidth, whichever binds (at most its length), in whole
// nanoseconds, so that sums do not depend on how iterations were grouped into events.
std::int64_t LlmCluster::useful_ns(const Hardware& c, const PrefillWork& prefill, const DecodeWork& decode,
                                   SimTime length) {
  const double compute_ns = c.per_token_ns * static_cast<double>(prefill.tokens + decode.batch) +
                            c.per_attention_pair_ns * (prefill.squared_tokens + static_cast<double>(decode.context_tokens));
  const double memory_ns = c.weights_ns + c.per_kv_token_ns * static_cast<double>(decode.context_tokens + prefill.tokens);
  const double ideal_ns = std::min(std::max(compute_ns, memory_ns), static_cast<double>(length.us()) * 1e3);
  return static_cast<std::int64_t>(ideal_ns + 0.5);
}

// The running segment's useful work done by now: whole iterations (exact integers), and
// the running one's useful work in proportion to its elapsed time (the same figure an
// unfolded run's level gives over that iteration).
LlmCluster::Useful LlmCluster::useful_so_far(const Instance& in) const {
  Useful done;
  if (!in.busy) return done;
  const Segment& segment = in.segment;
  const SimTime now = sim_.now();
  SimTime start = segment.start;
  for (std::uint32_t i = 0; i < segment.iterations && start < now; ++i) {
    const auto& step = segment.steps[i];
    if (start + step.length <= now) {
      done.whole_ns += step.useful_ns;
    } else {
      done.partial_ns += static_cast<double>(step.useful_ns) * static_cast<double>((now - start).us()) /
                         static_cast<double>(step.length.us());
    }
    start += step.length;
  }
  return done;
}

std::uint32_t LlmCluster::prefill_tokens(const Live& r) const {
  return r.record.prompt_tokens + (r.recomputing ? r.generated : 0);
}

// KV a prompt reserves when its prefill starts: its tokens and the first output token,
// or, rerun after a reserve-mode eviction, everything it will ever need.
std::uint64_t LlmCluster::prompt_kv_need(const Live& r) const {
  if (r.reserve_all) return std::uint64_t{r.record.prompt_tokens} + r.record.output_tokens;
  return std::uint64_t{prefill_tokens(r)} + 1;
}

// KV a sequence ready to decode must still reserve here before it joins a batch.
// Reserve: the rest of prompt + output (all of it when shipped from a prompt instance).
// On demand: its prompt and first token when shipped here, nothing when it holds them.
std::uint64_t LlmCluster::decode_kv_need(const Live& r) const {
  if (config_.kv_allocation == KvAllocation::kReserve) {
    return std::uint64_t{r.record.prompt_tokens} + r.record.output_tokens - r.kv_reserved;
  }
  return r.kv_reserved > 0 ? 0 : std::uint64_t{r.record.prompt_tokens} + 1;
}

void LlmCluster::start_iteration(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  if (in.busy || in.evacuating) return;
  if (in.vllm) {
    start_vllm_step(instance);
    return;
  }
  for (;;) {
    const bool evicted = form_batch(in);
    if (!in.prefill_batch.empty() || !in.decode_batch.empty()) break;
    // Evicting the whole batch freed memory for the recomputations: select again.
    if (evicted) continue;
    if (!in.has_waiting()) break;
    // Waiting work and nothing to run: no event would ever change that here.
    const bool evicted_waiting = break_kv_deadlock(in);
    MESHSIM_CHECK(evicted_waiting, "the serving model cannot make progress at " +
                                       std::to_string(sim_.now().seconds()) + " s: " + describe(instance));
  }
  refresh_load(instance);
  if (in.prefill_batch.empty() && in.decode_batch.empty()) return;
  running_ += in.prefill_batch.size() + in.decode_batch.size();
  in.busy = true;

  Segment& segment = in.segment;
  segment.start = sim_.now();
  segment.context = 0;
  for (const std::uint32_t slot : in.decode_batch) {
    const Live& r = live_[slot];
    segment.context += std::uint64_t{r.record.prompt_tokens} + r.generated;
  }
  if (!in.prefill_batch.empty()) {
    // A prefill (with any decodes beside it) is one iteration, never folded.
    PrefillWork prefill;
    for (const std::uint32_t slot : in.prefill_batch) {
      const std::uint32_t tokens = prefill_tokens(live_[slot]);
      prefill.tokens += tokens;
      ++prefill.sequences;
      prefill.squared_tokens += static_cast<double>(tokens) * tokens;
    }
    begin_prefill_step(in, prefill, DecodeWork{static_cast<std::uint32_t>(in.decode_batch.size()), segment.context});
    return;
  }
  begin_segment(in, fold_length(in));
}

// A step with prompts in it: one iteration, never folded.
void LlmCluster::begin_prefill_step(Instance& in, const PrefillWork& prefill, const DecodeWork& decode) {
  Segment& segment = in.segment;
  const Hardware& hw = hardware_of(in);
  const SimTime length = iteration_time(hw, prefill, decode);
  segment.iterations = 1;
  segment.fold_left = 0;
  segment.first = length;
  segment.useful_ns = useful_ns(hw, prefill, decode, length);
  segment.steps.assign(1, Segment::Step{length, segment.useful_ns});
  segment.longest_later = SimTime::zero();
  segment.end = segment.start + length;
  segment.cut = false;
  in.timer->arm_at(segment.end);
}

// What the end of every segment records: the timeline, its useful work, and each decoding
// sequence's tokens and gaps (its first iteration's end minus the sequence's previous
// token, then each later iteration's length).
void LlmCluster::close_segment(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  const SimTime now = sim_.now();
  const Segment& segment = in.segment;
  if (activity_ != nullptr) {
    activity_->on_iteration(instance, segment.start, now, static_cast<std::uint32_t>(in.prefill_batch.size()),
                            static_cast<std::uint32_t>(in.decode_batch.size()), segment.iterations);
  }
  useful_done_ns_ += segment.useful_ns;
  busy_done_us_ += (now - segment.start).us();
  const SimTime first_boundary = segment.start + segment.first;
  for (const std::uint32_t slot : in.decode_batch) {
    Live& r = live_[slot];
    r.tbt_max = std::max({r.tbt_max, first_boundary - r.last_token, segment.longest_later});
    r.generated += segment.iterations;
    r.last_token = now;
  }
}

// One iteration's batch, in SplitwiseSim's order: (1) decoding sequences left out of
// max_preemptions batches, (2) prompts, first come first served, while their tokens fit
// the budget (one over it runs alone) and their KV fits (on demand leaving a token free
// for each sequence decoding here, or admitting them would only evict one), (3) other
// paused sequences, (4) the previous batch (a sequence that no longer fits is paused and
// counted in `pauses`), (5) sequences ready to decode: those holding their KV, then
// newcomers while their KV fits. On demand, (6) the latest arrivals among the decoding
// sequences are evicted until each can take its next token. Returns whether it evicted.
bool LlmCluster::form_batch(Instance& in) {
  const BatchingConfig& limits = config_.batching;
  const bool on_demand = config_.kv_allocation == KvAllocation::kOnDemand;
  std::vector<std::uint32_t>& previous = scratch_;
  previous.clear();
  previous.swap(in.decode_batch);
  in.prefill_batch.clear();
  std::uint32_t size = 0;
  std::uint64_t tokens = 0;
  const auto room = [&](std::uint64_t more) {
    return size < limits.max_batch_size && (size == 0 || tokens + more <= limits.max_batch_tokens);
  };
  const auto take_decode = [&](SlotQueue& queue) {
    in.decode_batch.push_back(queue.front());
    queue.pop_front();
    ++size;
    ++tokens;
  };
  while (!in.starved.empty() && room(1)) take_decode(in.starved);
  const std::uint64_t keep_free = on_demand ? previous.size() + in.decoding() : 0;
  while (!in.prompts.empty()) {
    const std::uint32_t slot = in.prompts.front();
    Live& r = live_[slot];
    const std::uint32_t pass = prefill_tokens(r);
    const std::uint64_t need = prompt_kv_need(r);
    if (!room(pass) || in.kv_used + need + keep_free > kv_capacity(in)) break;
    in.prompts.pop_front();
    in.kv_used += need;
    r.kv_reserved += need;
    if (!r.record.started) r.record.started = sim_.now();
    in.prefill_batch.push_back(slot);
    ++size;
    tokens += pass;
  }
  while (!in.paused.empty() && room(1)) take_decode(in.paused);
  for (const std::uint32_t slot : previous) {
    if (room(1)) {
      in.decode_batch.push_back(slot);
      ++size;
      ++tokens;
    } else {
      // Left out: paused for this iteration (its KV stays reserved).
      Live& r = live_[slot];
      ++r.record.pauses;
      (r.record.pauses >= limits.max_preemptions ? in.starved : in.paused).push_back(slot);
    }
  }
  while (!in.holders.empty() && room(1)) take_decode(in.holders);
  while (!in.newcomers.empty() && room(1)) {
    Live& r = live_[in.newcomers.front()];
    const std::uint64_t need = decode_kv_need(r);
    if (in.kv_used + need > kv_capacity(in)) break;
    in.kv_used += need;
    r.kv_reserved += need;
    take_decode(in.newcomers);
  }
  if (!on_demand || in.kv_used + in.decode_batch.size() <= kv_capacity(in)) return false;
  evict_latest(in);
  return true;
}

// On demand: every decoding sequence takes one more KV token per iteration. Evicts the
// most recently arrived sequences of the batch until the rest fit (vLLM's choice: the
// oldest requests keep making progress).
void LlmCluster::evict_latest(Instance& in) {
  std::vector<std::uint32_t> by_arrival = in.decode_batch;
  std::sort(by_arrival.begin(), by_arrival.end(),
            [&](std::uint32_t a, std::uint32_t b) { return live_[a].record.id > live_[b].record.id; });
  std::size_t batch = in.decode_batch.size();
  std::size_t evicted = 0;
  while (batch > 0 && in.kv_used + batch > kv_capacity(in)) {
    evict_for_recompute(in, by_arrival[evicted++]);
    --batch;
  }
  // Keep the rest in batch order.
  std::erase_if(in.decode_batch, [&](std::uint32_t slot) { return live_[slot].recomputing; });
}

void LlmCluster::evict_for_recompute(Instance& in, std::uint32_t slot) {
  Live& r = live_[slot];
  in.kv_used -= r.kv_reserved;
  r.kv_reserved = 0;
  r.recomputing = true;
  r.reserve_all = config_.kv_allocation == KvAllocation::kReserve;
  ++r.record.kv_evictions;
  in.pending_tokens += prefill_tokens(r);
  in.prompts.push_front(slot);
}

// Reserve mode: an idle instance whose KV is held by sequences prefilled here that wait
// for the rest of their reservation would wait forever (nothing runs to free memory).
// The latest of them are evicted, to be recomputed reserving all they need at once, until
// the oldest can reserve the rest; it then decodes to the end. Returns whether anything
// was evicted. On demand this state cannot arise: sequences that hold KV always run.
bool LlmCluster::break_kv_deadlock(Instance& in) {
  if (in.newcomers.empty()) return false;
  const std::uint64_t head_need = decode_kv_need(live_[in.newcomers.front()]);
  bool evicted = false;
  std::vector<std::uint32_t> kept;  // back to front
  while (in.newcomers.size() > 1 && in.kv_used + head_need > kv_capacity(in)) {
    const std::uint32_t slot = in.newcomers.back();
    in.newcomers.pop_back();
    if (live_[slot].kv_reserved == 0) {
      kept.push_back(slot);
      continue;
    }
    evict_for_recompute(in, slot);
    evicted = true;
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) in.newcomers.push_back(*it);
  return evicted;
}

// Whether the batch just formed (decode only) would be formed again, unchanged, at the
// next iteration boundary if no new work arrives. It is, exactly when after one more
// iteration: (1, 3) no sequence is paused; (2) the next prompt's KV does not fit (it
// would be tried first, with the budget empty); (4) the batch still fits, which it does
// as it was formed alone; (5) no sequence ready to decode could join; (6) no eviction is
// due. Then, if nothing arrives, it is formed again at every boundary: in reserve mode
// KV use does not change, and on demand it only grows, which keeps (2) and (5) false,
// while fold_length stops before (6) becomes due.
bool LlmCluster::steady_after_one_iteration(const Instance& in) const {
  if (!in.starved.empty() || !in.paused.empty()) return false;
  const bool on_demand = config_.kv_allocation == KvAllocation::kOnDemand;
  const std::uint64_t batch = in.decode_batch.size();
  const std::uint64_t kv_next = in.kv_used + (on_demand ? batch : 0);
  if (!in.prompts.empty()) {
    const std::uint64_t keep_free = on_demand ? batch + in.holders.size() : 0;
    if (kv_next + prompt_kv_need(live_[in.prompts.front()]) + keep_free <= kv_capacity(in)) return false;
  }
  const bool room = batch < config_.batching.max_batch_size && batch + 1 <= config_.batching.max_batch_tokens;
  if (room) {
    if (!in.holders.empty()) return false;
    if (!in.newcomers.empty() && kv_next + decode_kv_need(live_[in.newcomers.front()]) <= kv_capacity(in)) {
      return false;
    }
  }
  return !on_demand || kv_next + batch <= kv_capacity(in);
}

// Iterations the decode batch just formed runs before the unfolded model would form a
// different one: until its first sequence finishes, if steady (and on demand, until
// an eviction is due); otherwise one.
std::uint32_t LlmCluster::fold_length(const Instance& in) const {
  if (!config_.fold_decode || !steady_after_one_iteration(in)) return 1;
  std::uint32_t length = ~0u;
  for (const std::uint32_t slot : in.decode_batch) {
    length = std::min(length, live_[slot].record.output_tokens - live_[slot].generated);
  }
  if (config_.kv_allocation == KvAllocation::kOnDemand) {
    // Iteration i (from 0) starts with kv_used + i * batch tokens held and needs batch more.
    const std::uint64_t batch = in.decode_batch.size();
    length = static_cast<std::uint32_t>(std::min<std::uint64_t>(length, (kv_capacity(in) - in.kv_used) / batch));
  }
  MESHSIM_CHECK(length >= 1, "an iteration must make progress");
  return length;
}

// Times the next up to kFoldSegment iterations of the decode batch and arms the timer at
// their end; `iterations` is how many the batch runs in all before it changes.
void LlmCluster::begin_segment(Instance& in, std::uint32_t iterations) {
  Segment& segment = in.segment;
  const auto batch = static_cast<std::uint32_t>(in.decode_batch.size());
  // The previous segment timed as many as it could and ran them all: this one may time
  // twice as many. Otherwise (cut, a prefill, the batch changed) it starts short again.
  const bool ran_whole = segment.cap != 0 && segment.iterations == segment.cap && !segment.cut;
  segment.cap = ran_whole ? std::min(2 * segment.cap, kFoldSegment) : kFirstSegment;
  segment.iterations = std::min(iterations, segment.cap);
  segment.fold_left = iterations - segment.iterations;
  segment.cut = false;
  segment.longest_later = SimTime::zero();
  segment.useful_ns = 0;
  segment.steps.resize(segment.iterations);
  SimTime end = segment.start;
  const Hardware& hw = hardware_of(in);
  for (std::uint32_t i = 0; i < segment.iterations; ++i) {
    const std::uint64_t context = segment.context + std::uint64_t{i} * batch;
    const DecodeWork decode{batch, context};
    const SimTime length = iteration_time(hw, PrefillWork{}, decode);
    const std::int64_t useful = useful_ns(hw, PrefillWork{}, decode, length);
    segment.steps[i] = Segment::Step{length, useful};
    segment.useful_ns += useful;
    if (i == 0) {
      segment.first = length;
    } else {
      segment.longest_later = std::max(segment.longest_later, length);
    }
    end += length;
  }
  segment.end = end;
  in.timer->arm_at(end);
}

// New work arrived at a busy instance: a folded run ends at the first iteration boundary
// at or after now, where the unfolded model would let the work join.
void LlmCluster::interrupt_fold(Instance& in) {
  Segment& segment = in.segment;
  if (segment.cut || !in.prefill_batch.empty()) return;
  segment.cut = true;
  segment.fold_left = 0;
  SimTime boundary = segment.start;
  SimTime longest_later;
  std::int64_t useful = 0;
  for (std::uint32_t i = 0; i < segment.iterations; ++i) {
    const SimTime length = segment.steps[i].length;
    useful += segment.steps[i].useful_ns;
    if (i > 0) longest_later = std::max(longest_later, length);
    boundary += length;
    if (boundary >= sim_.now()) {
      segment.iterations = i + 1;
      segment.steps.resize(i + 1);
      segment.longest_later = longest_later;
      segment.useful_ns = useful;
      if (boundary != segment.end) {
        segment.end = boundary;
        in.timer->arm_at(boundary);
      }
      return;
    }
  }
}

// Iterations of the running segment begun by now (at least its first).
std::uint32_t LlmCluster::iterations_begun(const Instance& in) const {
  const Segment& segment = in.segment;
  std::uint32_t begun = 1;
  SimTime start = segment.start + segment.first;
  for (std::uint32_t i = 1; i < segment.iterations && start < sim_.now(); ++i) {
    ++begun;
    start += segment.steps[i].length;
  }
  return begun;
}

// KV tokens held beyond kv_used. On demand, those taken by the running segment's
// iterations begun by now (counted in kv_used when it ends): the unfolded model takes them
// as each iteration is formed; one that starts exactly now is formed after everything else
// at this time. Under the vLLM scheduler, every block in use (kv_used stays 0).
std::uint64_t LlmCluster::kv_in_segment(const Instance& in) const {
  if (in.vllm) {
    return std::uint64_t{in.vllm->used_blocks(in.busy ? iterations_begun(in) : 1)} * config_.vllm.block_size;
  }
  if (!in.busy || config_.kv_allocation != KvAllocation::kOnDemand || in.decode_batch.empty()) return 0;
  return std::uint64_t{iterations_begun(in)} * in.decode_batch.size();
}

void LlmCluster::end_iteration(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  const SimTime now = sim_.now();
  Segment& segment = in.segment;
  close_segment(instance);
  const std::uint32_t steps = segment.iterations;
  const bool on_demand = config_.kv_allocation == KvAllocation::kOnDemand;
  if (on_demand) {
    for (const std::uint32_t slot : in.decode_batch) live_[slot].kv_reserved += steps;
    in.kv_used += std::uint64_t{steps} * in.decode_batch.size();
  }
  if (segment.fold_left > 0) {
    // The batch runs on unchanged (see fold_length): time its next segment.
    const std::uint32_t left = segment.fold_left;
    segment.context += std::uint64_t{steps} * in.decode_batch.size();
    segment.start = now;
    begin_segment(in, left);
    return;
  }
  running_ -= in.prefill_batch.size() + in.decode_batch.size();
  in.busy = false;
  std::vector<std::uint32_t>& still_decoding = scratch_;
  still_decoding.clear();
  for (const std::uint32_t slot : in.decode_batch) {
    if (live_[slot].generated >= live_[slot].record.output_tokens) {
      finish(slot, metrics::RequestStatus::kCompleted);
    } else {
      still_decoding.push_back(slot);
    }
  }
  in.decode_batch.swap(still_decoding);
  for (const std::uint32_t slot : in.prefill_batch) prefill_done(instance, slot);
  in.prefill_batch.clear();
  if (in.evacuating) {
    // Its requests move one microsecond later, from an ordinary (FIFO) event: moved now,
    // from this ranked event, they would reach instances whose iteration ends at this
    // same time ran before it (lower rank) after their batch was formed in an unfolded
    // run, yet within a folded run's iteration boundary; every other new work arrives
    // from FIFO events, before all ranked ones.
    sim_.schedule_after(SimTime::from_us(1), *this, engine::EventPayload{kMigrate, instance});
    return;
  }
  start_iteration(instance);
}

}  // namespace meshsim::cluster
