// vLLM v1's scheduler as an InstanceEngine: the VllmScheduler forms each step; this file
// describes it as work for the performance model and applies its preemptions to the
// sequences (first tokens, token gaps and completions are the cluster's).

#include "sim/batching/vllm_engine.hpp"

namespace meshsim::cluster {

namespace {
// Request ids grow with arrival: the id is the arrival vLLM's priority policy breaks ties by.
VllmRank rank(const Sequence& s) { return VllmRank{s.priority, s.id}; }
}  // namespace

VllmEngine::VllmEngine(const VllmLimits& limits, std::uint64_t kv_capacity_tokens, Sequences& sequences)
    : scheduler_(limits, static_cast<std::uint32_t>(kv_capacity_tokens / limits.block_size)), seqs_(sequences) {}

void VllmEngine::enqueue_prefill(std::uint32_t slot) {
  const Sequence& s = seqs_[slot];
  scheduler_.enqueue(slot, seqs_.stream(slot), s.prompt_tokens + s.generated, 0, rank(s));
}

// Admitted holding its prompt's KV (it arrived) and the first token to compute.
void VllmEngine::enqueue_transferred(std::uint32_t slot) {
  const Sequence& s = seqs_[slot];
  scheduler_.enqueue(slot, seqs_.stream(slot), s.prompt_tokens + s.generated, s.prompt_tokens, rank(s));
}

// A KV transfer that landed on an evacuated instance never joined the scheduler.
void VllmEngine::remove(std::uint32_t slot) {
  if (scheduler_.holds(slot)) scheduler_.remove(slot);
}

// A decode: one more output token. A single sampling token may also end a prefill or a
// recomputation whose other tokens hit the prefix cache: that is a prefill here.
bool VllmEngine::decodes(const VllmScheduler::Chunk& chunk) const {
  const Sequence& s = seqs_[chunk.slot];
  return chunk.decodes && s.generated > 0 && !s.recomputing;
}

const EngineStep& VllmEngine::form_step() {
  step_.recompute_started.clear();
  step_.queried_tokens = step_.hit_tokens = 0;
  const VllmScheduler::Step* formed = nullptr;
  for (;;) {
    formed = &scheduler_.schedule();
    step_.queried_tokens += formed->queried_tokens;
    step_.hit_tokens += formed->hit_tokens;
    for (const std::uint32_t slot : formed->preempted) {
      // Its KV was freed to make room: it waits to recompute its prompt and the output so
      // far (the same counts as an eviction under SplitwiseSim's rules).
      Sequence& s = seqs_[slot];
      ++s.kv_evictions;
      if (s.generated > 0 && !s.recomputing) {
        s.recomputing = true;
        step_.recompute_started.push_back(slot);
      }
    }
    // A step that preempted every running request admits none: form the next one.
    if (!formed->chunks.empty() || formed->preempted.empty()) break;
  }
  step_.prefill.clear();
  step_.decode.clear();
  step_.prefill_work = PrefillWork{};
  step_.decode_work = DecodeWork{};
  fewest_left_ = ~0u;
  for (const auto& chunk : formed->chunks) {
    if (decodes(chunk)) {
      const Sequence& s = seqs_[chunk.slot];
      fewest_left_ = std::min(fewest_left_, s.output_tokens - s.generated);
      step_.decode.push_back(chunk.slot);
      ++step_.decode_work.batch;
      step_.decode_work.context_tokens += std::uint64_t{chunk.context} + 1;
    } else {
      step_.prefill.push_back(chunk.slot);
      const auto before = static_cast<double>(chunk.context);
      const double end = before + chunk.tokens;
      step_.prefill_work.tokens += chunk.tokens;
      ++step_.prefill_work.sequences;
      step_.prefill_work.squared_tokens += end * end - before * before;
      step_.prefill_work.context_tokens += chunk.context;
    }
  }
  return step_;
}

void VllmEngine::complete(std::uint32_t iterations, StepOutcome& outcome) {
  for (const std::uint32_t slot : step_.decode) {
    if (seqs_[slot].generated >= seqs_[slot].output_tokens) outcome.finished.push_back(slot);
  }
  // Which prefill chunks sampled, read before complete() moves the scheduler on.
  for (const auto& chunk : scheduler_.step().chunks) {
    if (chunk.samples && !decodes(chunk)) outcome.prefilled.push_back(chunk.slot);
  }
  scheduler_.complete(iterations);
  step_.prefill.clear();
  step_.decode.clear();
}

std::uint64_t VllmEngine::kv_used_tokens(std::uint32_t begun) const {
  return std::uint64_t{scheduler_.used_blocks(begun > 0 ? begun : 1)} * scheduler_.limits().block_size;
}

std::uint32_t VllmEngine::cached_prefix_tokens(std::uint32_t slot, std::uint32_t tokens, std::uint32_t begun) {
  // Mid-way through a folded run the cache must read as an unfolded run's does now.
  if (begun > 0) scheduler_.materialize(begun);
  return scheduler_.cached_prefix_tokens(seqs_.stream(slot), tokens);
}

std::string VllmEngine::describe() const {
  std::string out = std::to_string(step_.decode.size() + step_.prefill.size()) + " in the step, " +
                    std::to_string(scheduler_.running()) + " running and " + std::to_string(scheduler_.waiting()) +
                    " waiting in the vLLM scheduler";
  if (scheduler_.loading() > 0) out += ", " + std::to_string(scheduler_.loading()) + " loading from host memory";
  return out;
}

}  // namespace meshsim::cluster
