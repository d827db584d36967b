// LlmCluster's steps on instances under the vLLM scheduler (config.scheduler kVllm): the
// VllmScheduler forms each step, this file prices it with the PerfModel, times it as an
// event, and applies what it did to the requests (first tokens, token gaps, preemptions,
// the Splitwise hand-off of prefilled requests, completions).
//
// Folding: a decode-only step runs as one event for as many iterations as the scheduler
// says it would form again unchanged (VllmScheduler::steady_iterations, at most until
// the first request finishes and kFoldSegment); at the end of every event the scheduler
// forms the next step afresh, exactly as an unfolded run does at that boundary. A cut
// (new work arrived) ends the event at the first boundary at or after it.

#include <algorithm>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/llm_cluster_state.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::cluster {

std::unique_ptr<VllmScheduler> LlmCluster::make_vllm_scheduler(const Instance& in) const {
  return std::make_unique<VllmScheduler>(config_.vllm,
                                         static_cast<std::uint32_t>(kv_capacity(in) / config_.vllm.block_size));
}

void LlmCluster::enqueue_prefill(std::uint32_t instance, std::uint32_t slot) {
  Instance& in = *instances_[instance];
  if (!in.vllm) {
    in.prompts.push_back(slot);
    return;
  }
  Live& r = live_[slot];
  in.vllm->enqueue(slot, r.stream, r.record.prompt_tokens + r.generated, 0);
  if (config_.request_timeout) in.deadlines.emplace(r.deadline, slot);
}

// A request's KV was freed to make room: it waits to recompute its prompt and the output
// so far (the same counts as a SplitwiseSim-mode eviction).
void LlmCluster::vllm_preempted(Instance& in, std::uint32_t slot) {
  Live& r = live_[slot];
  ++r.record.kv_evictions;
  if (r.generated > 0 && !r.recomputing) {
    r.recomputing = true;
    in.pending_tokens += prefill_tokens(r);
  }
}

// A decode: one more output token. A single sampling token may also end a prefill or a
// recomputation whose other tokens hit the prefix cache: that is a prefill here.
bool LlmCluster::vllm_decodes(const VllmScheduler::Chunk& chunk) const {
  const Live& r = live_[chunk.slot];
  return chunk.decodes && r.generated > 0 && !r.recomputing;
}

void LlmCluster::start_vllm_step(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  VllmScheduler& scheduler = *in.vllm;
  if (config_.request_timeout) abort_expired(instance);
  const VllmScheduler::Step* step = nullptr;
  for (;;) {
    step = &scheduler.schedule();
    in.prefix.queried_tokens += step->queried_tokens;
    in.prefix.hit_tokens += step->hit_tokens;
    for (const std::uint32_t slot : step->preempted) vllm_preempted(in, slot);
    // A step that preempted every running request admits none: form the next one.
    if (!step->chunks.empty() || step->preempted.empty()) break;
  }
  in.prefill_batch.clear();
  in.decode_batch.clear();
  if (step->chunks.empty()) {
    // Requests that fit the KV cache alone are always admitted to an idle instance.
    MESHSIM_CHECK(scheduler.empty(), "the serving model cannot make progress at " +
                                         std::to_string(sim_.now().seconds()) + " s: " + describe(instance));
    refresh_load(instance);
    return;
  }
  PrefillWork prefill;
  DecodeWork decode;
  std::uint32_t fold = config_.fold_decode ? kFoldSegment : 1;
  for (const auto& chunk : step->chunks) {
    Live& r = live_[chunk.slot];
    if (!r.record.started) r.record.started = sim_.now();
    if (vllm_decodes(chunk)) {
      in.decode_batch.push_back(chunk.slot);
      ++decode.batch;
      decode.context_tokens += std::uint64_t{chunk.context} + 1;
      fold = std::min(fold, r.record.output_tokens - r.generated);
    } else {
      in.prefill_batch.push_back(chunk.slot);
      const auto before = static_cast<double>(chunk.context);
      const double end = before + chunk.tokens;
      prefill.tokens += chunk.tokens;
      ++prefill.sequences;
      prefill.squared_tokens += end * end - before * before;
      prefill.context_tokens += chunk.context;
    }
  }
  refresh_load(instance);
  running_ += step->chunks.size();
  in.busy = true;
  Segment& segment = in.segment;
  segment.start = sim_.now();
  segment.context = decode.context_tokens;
  if (!in.prefill_batch.empty()) {
    begin_prefill_step(in, prefill, decode);
    return;
  }
  begin_segment(in, scheduler.steady_iterations(fold));
}

void LlmCluster::end_vllm_step(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  const std::uint32_t steps = in.segment.iterations;
  close_segment(instance);
  // Which prefill chunks sampled, read before complete() moves the step on.
  std::vector<std::uint32_t>& sampled = scratch_;
  sampled.clear();
  for (const auto& chunk : in.vllm->step().chunks) {
    if (chunk.samples && !vllm_decodes(chunk)) sampled.push_back(chunk.slot);
  }
  in.vllm->complete(steps);
  running_ -= in.prefill_batch.size() + in.decode_batch.size();
  in.busy = false;
  for (const std::uint32_t slot : in.decode_batch) {
    if (live_[slot].generated >= live_[slot].record.output_tokens) finish(slot, metrics::RequestStatus::kCompleted);
  }
  for (const std::uint32_t slot : sampled) {
    // A prompt instance lets a prefilled request go (its KV moves to a token instance).
    const Live& r = live_[slot];
    if (in.tag == InstanceTag::kPrompt && !r.recomputing && r.record.output_tokens > 1) in.vllm->remove(slot);
    prefill_done(instance, slot);
  }
  in.decode_batch.clear();
  in.prefill_batch.clear();
  refresh_load(instance);
  if (in.evacuating) {
    // As end_iteration: the requests move one microsecond later, from a FIFO event.
    sim_.schedule_after(SimTime::from_us(1), *this, engine::EventPayload{kMigrate, instance});
    return;
  }
  start_vllm_step(instance);
}

}  // namespace meshsim::cluster
