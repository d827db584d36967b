// Each instance engine alone, without a cluster or an event loop: the test plays the
// cluster's part (a sequence table, prefill results, token counts) and checks the steps
// an engine forms and what it does to the sequences' KV. The engines inside the whole
// cluster are checked on random cases in llm_cluster_property_test.cpp.
#include "sim/batching/instance_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace meshsim::cluster {
namespace {

using Slots = std::vector<std::uint32_t>;

// The cluster's side of a few requests: their sequences and the engine serving them.
struct Bench {
  Sequences seqs;
  std::unique_ptr<InstanceEngine> engine;

  Bench(const EngineOptions& options, std::uint64_t kv_tokens) {
    engine = make_engine(options, usable_kv_tokens(options, kv_tokens), seqs);
  }
  std::uint32_t add(std::uint32_t prompt, std::uint32_t output, std::uint64_t shared_run = 0,
                    std::uint32_t shared = 0) {
    const std::uint32_t slot = seqs.add();
    Sequence& s = seqs[slot];
    s.id = slot;
    s.prompt_tokens = prompt;
    s.output_tokens = output;
    std::vector<traces::ContentSegment> prefix;
    if (shared > 0) prefix.push_back({shared_run, shared});
    seqs.stream(slot) = TokenStream(slot, prompt, prefix, 0);
    return slot;
  }
  // Runs the formed step `iterations` times as the cluster does: its decodes gain tokens,
  // its finished prefills produce their first (or next) token and decode here.
  Slots run(std::uint32_t iterations = 1) {
    for (const std::uint32_t slot : engine->step().decode) seqs[slot].generated += iterations;
    StepOutcome outcome;
    engine->complete(iterations, outcome);
    finished = outcome.finished;
    for (const std::uint32_t slot : outcome.prefilled) {
      Sequence& s = seqs[slot];
      s.recomputing = false;
      ++s.generated;
      engine->decode_here(slot);
    }
    return outcome.prefilled;
  }
  Slots finished;  // by the last run()
};

EngineOptions splitwise(KvAllocation allocation, std::uint32_t batch_tokens = 2048, std::uint32_t batch_size = 512) {
  EngineOptions options;
  options.kv_allocation = allocation;
  options.batching.max_batch_tokens = batch_tokens;
  options.batching.max_batch_size = batch_size;
  return options;
}

EngineOptions vllm(std::uint32_t budget, std::uint32_t block = 16) {
  EngineOptions options;
  options.scheduler = BatchScheduler::kVllm;
  options.vllm.max_num_batched_tokens = budget;
  options.vllm.max_num_seqs = 8;
  options.vllm.block_size = block;
  return options;
}

TEST(SplitwiseEngineTest, PromptsJoinFirstComeFirstServedWhileTheirTokensFitTheBudget) {
  Bench bench(splitwise(KvAllocation::kReserve, 100), 10'000);
  const auto a = bench.add(60, 4), b = bench.add(30, 4), c = bench.add(20, 4);
  for (const auto slot : {a, b, c}) bench.engine->enqueue_prefill(slot);
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.prefill, (Slots{a, b}));  // 60 + 30 fit 100; the third would not
  EXPECT_TRUE(step.decode.empty());
  EXPECT_EQ(step.prefill_work.tokens, 90u);
  EXPECT_DOUBLE_EQ(step.prefill_work.squared_tokens, 60.0 * 60 + 30.0 * 30);
  // Each reserved its prompt and first token.
  EXPECT_EQ(bench.engine->kv_used_tokens(0), 61u + 31u);
  EXPECT_EQ(bench.run(), (Slots{a, b}));
  // Next: the waiting prompt, with the two decoding beside it.
  const EngineStep& next = bench.engine->form_step();
  EXPECT_EQ(next.prefill, (Slots{c}));
  EXPECT_EQ(next.decode, (Slots{a, b}));
  EXPECT_EQ(next.decode_work.context_tokens, 61u + 31u);
  EXPECT_TRUE(bench.engine->check_invariants().empty());
}

TEST(SplitwiseEngineTest, UnderReserveAnIdleInstanceStuckOnKvEvictsTheLatestToRecomputeIt) {
  // Both prompts fit (11 + 11 tokens), but each needs 20 to decode: neither can go on
  // until the later one gives its KV up and recomputes, reserving all it needs.
  Bench bench(splitwise(KvAllocation::kReserve), 30);
  const auto a = bench.add(10, 10), b = bench.add(10, 10);
  bench.engine->enqueue_prefill(a);
  bench.engine->enqueue_prefill(b);
  bench.engine->form_step();
  bench.run();
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.decode, (Slots{a}));
  EXPECT_TRUE(step.prefill.empty());
  EXPECT_EQ(step.recompute_started, (Slots{b}));
  EXPECT_TRUE(bench.seqs[b].recomputing && bench.seqs[b].reserve_all);
  EXPECT_EQ(bench.seqs[b].kv_evictions, 1u);
  EXPECT_EQ(bench.seqs[b].kv_reserved, 0u);
  EXPECT_EQ(bench.engine->kv_used_tokens(0), 20u);  // a's whole reservation
  EXPECT_TRUE(bench.engine->check_invariants().empty());
  // a decodes to its end alone (its batch is steady: b's rerun cannot fit), then b runs.
  EXPECT_EQ(bench.engine->steady_iterations(9), 9u);
  bench.run(9);
  EXPECT_EQ(bench.finished, (Slots{a}));
  bench.engine->remove(a);  // the cluster lets it go
  const EngineStep& rerun = bench.engine->form_step();
  EXPECT_EQ(rerun.prefill, (Slots{b}));
  EXPECT_EQ(rerun.prefill_work.tokens, 11u);  // its prompt and the token it had
}

TEST(SplitwiseEngineTest, OnDemandEvictsTheLatestArrivalsUntilTheRestCanTakeTheirNextToken) {
  // Three sequences of 10 prompt tokens hold 11 each of 34: the next iteration needs 3
  // more, one too many.
  Bench bench(splitwise(KvAllocation::kOnDemand), 34);
  const auto a = bench.add(10, 50), b = bench.add(10, 50), c = bench.add(10, 50);
  for (const auto slot : {a, b, c}) bench.engine->enqueue_prefill(slot);
  // On demand, a prompt leaves a token free per sequence decoding here: all three fit.
  EXPECT_EQ(bench.engine->form_step().prefill, (Slots{a, b, c}));
  bench.run();
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.decode, (Slots{a, b}));
  EXPECT_EQ(step.recompute_started, (Slots{c}));
  EXPECT_EQ(bench.engine->kv_used_tokens(0), 22u);
  // While the step runs, each iteration begun takes a token per sequence.
  EXPECT_EQ(bench.engine->kv_used_tokens(3), 28u);
  EXPECT_TRUE(bench.engine->check_invariants().empty());
}

TEST(SplitwiseEngineTest, ASequenceLeftOutOfTooManyBatchesGoesBeforeNewPrompts) {
  // One sequence per batch: every new prompt pushes the decoding sequence out.
  EngineOptions options = splitwise(KvAllocation::kReserve, 2048, 1);
  options.batching.max_preemptions = 2;
  Bench bench(options, 10'000);
  const auto a = bench.add(5, 50);
  bench.engine->enqueue_prefill(a);
  bench.engine->form_step();
  bench.run();
  EXPECT_EQ(bench.engine->form_step().decode, (Slots{a}));
  bench.run();
  bench.engine->enqueue_prefill(bench.add(5, 50));
  EXPECT_EQ(bench.engine->form_step().decode, Slots{});  // the prompt first; a is paused
  bench.run();
  EXPECT_EQ(bench.seqs[a].pauses, 1u);
  EXPECT_EQ(bench.engine->form_step().decode, (Slots{a}));  // paused before those ready to decode
  bench.run();
  bench.engine->enqueue_prefill(bench.add(5, 50));
  bench.engine->form_step();
  bench.run();
  EXPECT_EQ(bench.seqs[a].pauses, 2u);  // starved now: it runs before any prompt
  bench.engine->enqueue_prefill(bench.add(5, 50));
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.decode, (Slots{a}));
  EXPECT_TRUE(step.prefill.empty());
}

TEST(SplitwiseEngineTest, ADecodeBatchIsSteadyUntilAPromptCouldJoin) {
  Bench bench(splitwise(KvAllocation::kReserve), 100);
  const auto a = bench.add(40, 20);
  bench.engine->enqueue_prefill(a);
  bench.engine->form_step();
  bench.run();
  EXPECT_EQ(bench.engine->form_step().decode, (Slots{a}));
  EXPECT_EQ(bench.engine->steady_iterations(19), 19u);
  EXPECT_EQ(bench.engine->steady_iterations(1), 1u);
  // A prompt whose KV fits would join at the next boundary: not steady.
  bench.engine->enqueue_prefill(bench.add(30, 5));
  EXPECT_EQ(bench.engine->steady_iterations(19), 1u);
}

TEST(SplitwiseEngineTest, EvacuationHandsOverEveryRequestAndRemovalReleasesItsKv) {
  Bench bench(splitwise(KvAllocation::kReserve, 100), 10'000);
  const auto a = bench.add(60, 9), b = bench.add(50, 9), c = bench.add(10, 9);
  for (const auto slot : {a, b, c}) bench.engine->enqueue_prefill(slot);
  bench.engine->form_step();
  bench.run();
  Slots all = bench.engine->evacuate();
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (Slots{a, b, c}));
  EXPECT_FALSE(bench.engine->has_waiting());
  for (const auto slot : all) bench.engine->remove(slot);
  EXPECT_EQ(bench.engine->kv_used_tokens(0), 0u);
  EXPECT_TRUE(bench.engine->form_step().empty());
}

TEST(VllmEngineTest, ALongPromptIsPrefilledInChunksAndSamplesOnlyWithItsLastChunk) {
  Bench bench(vllm(64), 16 * 100);
  const auto a = bench.add(100, 3);
  bench.engine->enqueue_prefill(a);
  const EngineStep& first = bench.engine->form_step();
  EXPECT_EQ(first.prefill, (Slots{a}));
  EXPECT_EQ(first.prefill_work.tokens, 64u);
  EXPECT_TRUE(bench.run().empty());  // its prompt is not computed yet
  const EngineStep& second = bench.engine->form_step();
  EXPECT_EQ(second.prefill_work.tokens, 36u);
  EXPECT_EQ(second.prefill_work.context_tokens, 64u);
  EXPECT_EQ(bench.run(), (Slots{a}));
  const EngineStep& decode = bench.engine->form_step();
  EXPECT_EQ(decode.decode, (Slots{a}));
  EXPECT_EQ(decode.decode_work.context_tokens, 101u);
  // Blocks: 101 tokens known, the next one's in the same block.
  EXPECT_EQ(bench.engine->kv_used_tokens(0), 16u * 7);
  EXPECT_TRUE(bench.engine->check_invariants().empty());
}

TEST(VllmEngineTest, APromptSharingACachedPrefixHitsItAndCountsTheHit) {
  Bench bench(vllm(2048), 16 * 100);
  const auto a = bench.add(64, 1, 7, 48), b = bench.add(64, 1, 7, 48);
  bench.engine->enqueue_prefill(a);
  bench.engine->form_step();
  bench.run();
  bench.engine->remove(a);  // its blocks stay cached
  EXPECT_EQ(bench.engine->cached_prefix_tokens(b, 64, 0), 48u);
  bench.engine->enqueue_prefill(b);
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.hit_tokens, 48u);
  EXPECT_EQ(step.queried_tokens, 64u);
  EXPECT_EQ(step.prefill_work.tokens, 16u);
}

TEST(VllmEngineTest, KvCapacityIsWholeBlocksAndAPreemptedDecoderRecomputes) {
  EXPECT_EQ(usable_kv_tokens(vllm(2048), 100), 96u);
  EXPECT_EQ(usable_kv_tokens(splitwise(KvAllocation::kReserve), 100), 100u);
  // Two requests of 30 prompt tokens in 4 blocks of 16: each holds 2; the first to need
  // a third preempts the later one.
  Bench bench(vllm(2048), 64);
  const auto a = bench.add(30, 20), b = bench.add(30, 20);
  bench.engine->enqueue_prefill(a);
  bench.engine->enqueue_prefill(b);
  bench.engine->form_step();
  bench.run();
  for (int i = 0; i < 2; ++i) {
    bench.engine->form_step();
    bench.run();
  }
  // 33 tokens known each: the next needs a third block.
  const EngineStep& step = bench.engine->form_step();
  EXPECT_EQ(step.decode, (Slots{a}));
  EXPECT_EQ(step.recompute_started, (Slots{b}));
  EXPECT_TRUE(bench.seqs[b].recomputing);
  EXPECT_EQ(bench.seqs[b].kv_evictions, 1u);
}

}  // namespace
}  // namespace meshsim::cluster
