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

// Forms the instance's next step with its engine and starts timing it; an idle instance
// with nothing to run stays idle.
void LlmCluster::start_step(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  if (in.busy || in.evacuating) return;
  if (config_.request_timeout) abort_expired(instance);
  in.engine->advance(sim_.now());
  const EngineStep& step = in.engine->form_step();
  in.prefix.queried_tokens += step.queried_tokens;
  in.prefix.hit_tokens += step.hit_tokens;
  in.prefix.host += in.engine->take_host_counts();
  for (const std::uint32_t slot : step.recompute_started) in.pending_tokens += seqs_[slot].prefill_tokens();
  fleet_.refresh_load(instance);
  // A host load ending lets its request in: the instance is woken then, as for new work.
  if (const auto load_done = in.engine->wake_at(); load_done && (!in.host_wake || *load_done < *in.host_wake)) {
    in.host_wake = *load_done;
    sim_.schedule_at(*load_done, *this, engine::EventPayload{kHostLoad, instance});
  }
  if (step.empty()) {
    // Waiting work and nothing to run: no event would ever change that here.
    MESHSIM_CHECK(!in.engine->has_waiting() || in.host_wake,
                  "the serving model cannot make progress at " + std::to_string(sim_.now().seconds()) +
                      " s: " + describe(instance));
    return;
  }
  const SimTime now = sim_.now();
  // (A decoding request started with its prefill.)
  for (const std::uint32_t slot : step.prefill) {
    if (!live_[slot].record.started) live_[slot].record.started = now;
  }
  running_ += step.prefill.size() + step.decode.size();
  in.busy = true;
  if (!step.prefill.empty()) {
    in.segment.begin_prefill(*in.hardware, now, step.prefill_work, step.decode_work);
  } else {
    const std::uint32_t steady = in.engine->steady_iterations(config_.fold_decode ? StepSegment::kFoldSegment : 1);
    in.segment.begin_decode(*in.hardware, now, static_cast<std::uint32_t>(step.decode.size()),
                            step.decode_work.context_tokens, steady);
  }
  in.timer->arm_at(in.segment.end());
}

// The instance's timer: the running segment ended. Tokens are counted, the engine applies
// the step, finished requests leave, prefilled ones go on (to decode here or to a token
// instance), and the next step is formed: a folded run re-forms its (unchanged) batch at
// every segment's end, so its engine's state is always an unfolded run's at a boundary.
void LlmCluster::end_step(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  const std::uint32_t iterations = in.segment.iterations();
  close_segment(instance);
  const EngineStep& step = in.engine->step();
  running_ -= step.prefill.size() + step.decode.size();
  in.busy = false;
  outcome_.finished.clear();
  outcome_.prefilled.clear();
  in.engine->complete(iterations, outcome_);
  in.prefix.host += in.engine->take_host_counts();
  for (const std::uint32_t slot : outcome_.finished) finish(slot, metrics::RequestStatus::kCompleted);
  for (const std::uint32_t slot : outcome_.prefilled) prefill_done(instance, slot);
  fleet_.report_if_drained(instance);
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

// What the end of every segment records: the timeline, its useful work, and each decoding
// sequence's tokens and gaps (its first iteration's end minus the sequence's previous
// token, then each later iteration's length).
void LlmCluster::close_segment(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  const SimTime now = sim_.now();
  const StepSegment& segment = in.segment;
  const EngineStep& step = in.engine->step();
  if (activity_ != nullptr) {
    activity_->on_iteration(instance, segment.start(), now, static_cast<std::uint32_t>(step.prefill.size()),
                            static_cast<std::uint32_t>(step.decode.size()), segment.iterations());
  }
  useful_done_ns_ += segment.useful_ns();
  busy_done_us_ += (now - segment.start()).us();
  const SimTime first_boundary = segment.first_boundary();
  for (const std::uint32_t slot : step.decode) {
    Live& r = live_[slot];
    r.tbt_max = std::max({r.tbt_max, first_boundary - r.last_token, segment.longest_later()});
    seqs_[slot].generated += segment.iterations();
    r.last_token = now;
  }
}

// New work arrived at a busy instance: a folded run ends at the first iteration boundary
// at or after now, where the unfolded model would let the work join.
void LlmCluster::interrupt_fold(ServingInstance& in) {
  if (const auto end = in.segment.cut(sim_.now())) in.timer->arm_at(*end);
}

}  // namespace meshsim::cluster
