// LlmCluster's steps: each instance's engine forms them (sim/batching), this file times
// them with the instance's performance model as events and records what they did.
//
// Folding is exact by construction: a decode-only step runs as one event for as many
// iterations as its engine says it would form again unchanged (steady_iterations), timed
// in segments, and a run is cut at the first boundary at or after the moment new work
// arrives. Iteration ends are ranked events, so at equal times every run sees arrivals
// and transfers first, then instances in index order.

#include <algorithm>

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

// Forms the instance's next step with its engine and starts timing it; an idle instance
// with nothing to run stays idle.
void LlmCluster::start_step(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  if (in.busy || in.evacuating) return;
  if (config_.request_timeout) abort_expired(instance);
  const EngineStep& step = in.engine->form_step();
  in.prefix.queried_tokens += step.queried_tokens;
  in.prefix.hit_tokens += step.hit_tokens;
  for (const std::uint32_t slot : step.recompute_started) in.pending_tokens += seqs_[slot].prefill_tokens();
  refresh_load(instance);
  if (step.empty()) {
    // Waiting work and nothing to run: no event would ever change that here.
    MESHSIM_CHECK(!in.engine->has_waiting(), "the serving model cannot make progress at " +
                                                 std::to_string(sim_.now().seconds()) + " s: " + describe(instance));
    return;
  }
  const SimTime now = sim_.now();
  // (A decoding request started with its prefill.)
  for (const std::uint32_t slot : step.prefill) {
    if (!live_[slot].record.started) live_[slot].record.started = now;
  }
  running_ += step.prefill.size() + step.decode.size();
  in.busy = true;
  Segment& segment = in.segment;
  segment.start = now;
  segment.context = step.decode_work.context_tokens;
  if (!step.prefill.empty()) {
    // A step with prompts in it is one iteration, never folded.
    begin_prefill_step(in, step.prefill_work, step.decode_work);
    return;
  }
  begin_segment(in, in.engine->steady_iterations(config_.fold_decode ? kFoldSegment : 1));
}

// The instance's timer: the running segment ended. Tokens are counted, the engine applies
// the step, finished requests leave, prefilled ones go on (to decode here or to a token
// instance), and the next step is formed: a folded run re-forms its (unchanged) batch at
// every segment's end, so its engine's state is always an unfolded run's at a boundary.
void LlmCluster::end_step(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  const std::uint32_t iterations = in.segment.iterations;
  close_segment(instance);
  const EngineStep& step = in.engine->step();
  running_ -= step.prefill.size() + step.decode.size();
  in.busy = false;
  outcome_.finished.clear();
  outcome_.prefilled.clear();
  in.engine->complete(iterations, outcome_);
  for (const std::uint32_t slot : outcome_.finished) finish(slot, metrics::RequestStatus::kCompleted);
  for (const std::uint32_t slot : outcome_.prefilled) prefill_done(instance, slot);
  if (in.evacuating) {
    // Its requests move one microsecond later, from an ordinary (FIFO) event: moved now,
    // from this ranked event, they would reach instances whose iteration ends at this
    // same time ran before it (lower rank) after their batch was formed in an unfolded
    // run, yet within a folded run's iteration boundary; every other new work arrives
    // from FIFO events, before all ranked ones.
    sim_.schedule_after(SimTime::from_us(1), *this, engine::EventPayload{kMigrate, instance});
    return;
  }
  start_step(instance);
}

// A step with prompts in it: one iteration, never folded.
void LlmCluster::begin_prefill_step(Instance& in, const PrefillWork& prefill, const DecodeWork& decode) {
  Segment& segment = in.segment;
  const Hardware& hw = hardware_of(in);
  const SimTime length = iteration_time(hw, prefill, decode);
  segment.iterations = 1;
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
  const EngineStep& step = in.engine->step();
  if (activity_ != nullptr) {
    activity_->on_iteration(instance, segment.start, now, static_cast<std::uint32_t>(step.prefill.size()),
                            static_cast<std::uint32_t>(step.decode.size()), segment.iterations);
  }
  useful_done_ns_ += segment.useful_ns;
  busy_done_us_ += (now - segment.start).us();
  const SimTime first_boundary = segment.start + segment.first;
  for (const std::uint32_t slot : step.decode) {
    Live& r = live_[slot];
    r.tbt_max = std::max({r.tbt_max, first_boundary - r.last_token, segment.longest_later});
    seqs_[slot].generated += segment.iterations;
    r.last_token = now;
  }
}

// Times the next up to kFoldSegment iterations of the decode-only step and arms the timer
// at their end; `iterations` is how many it runs unchanged (its engine's steady_iterations).
void LlmCluster::begin_segment(Instance& in, std::uint32_t iterations) {
  Segment& segment = in.segment;
  const auto batch = static_cast<std::uint32_t>(in.engine->step().decode.size());
  // The previous segment timed as many as it could and ran them all: this one may time
  // twice as many. Otherwise (cut, a prefill, the batch changed) it starts short again.
  const bool ran_whole = segment.cap != 0 && segment.iterations == segment.cap && !segment.cut;
  segment.cap = ran_whole ? std::min(2 * segment.cap, kFoldSegment) : kFirstSegment;
  segment.iterations = std::min(iterations, segment.cap);
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
  if (segment.cut || !in.engine->step().prefill.empty()) return;
  segment.cut = true;
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

// KV tokens held now: an unfolded run's use, counting what the running segment's
// iterations begun by now take.
std::uint64_t LlmCluster::kv_in_segment(const Instance& in) const {
  return in.engine->kv_used_tokens(in.busy ? iterations_begun(in) : 0);
}

}  // namespace meshsim::cluster
