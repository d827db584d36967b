// VllmScheduler's rules one at a time (vLLM v1's scheduler and KV cache manager), the
// same scheduler on the span cache and on its block-by-block twin, and the twin's block
// pool (KvBlockPool) against a slower one. The whole cluster under it is checked on random
// cases in llm_cluster_property_test.cpp (folded = unfolded, nothing lost).
#include "sim/batching/vllm_scheduler.hpp"
#include "tests/sim/kv_block_cache.hpp"
#include "tests/sim/kv_block_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <random>

namespace meshsim::cluster {
namespace {

struct Requests {
  std::deque<TokenStream> streams;
  // A request of `prompt` tokens whose first `shared` tokens are named run `id`.
  TokenStream& make(std::uint64_t request, std::uint32_t prompt, std::uint64_t id = 0, std::uint32_t shared = 0) {
    std::vector<traces::ContentSegment> prefix;
    if (shared > 0) prefix.push_back({id, shared});
    return streams.emplace_back(request, prompt, prefix, 0);
  }
};

VllmLimits limits(std::uint32_t seqs, std::uint32_t tokens, std::uint32_t block = 16) {
  VllmLimits l;
  l.max_num_seqs = seqs;
  l.max_num_batched_tokens = tokens;
  l.block_size = block;
  return l;
}

TEST(KvBlockPoolTest, ReusesTheLeastRecentlyFreedBlockAndEvictsItsCachedContents) {
  KvBlockPool pool(3, true);
  const auto a = pool.allocate(), b = pool.allocate(), c = pool.allocate();
  pool.cache(a, 11);
  pool.cache(b, 22);
  EXPECT_EQ(pool.free_blocks(), 0u);
  pool.release(b);
  pool.release(a);  // b was freed first, so it goes first
  EXPECT_EQ(pool.cached(22), b);
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.cached(22), KvBlockPool::kNone);
  EXPECT_EQ(pool.evictions(), 1u);
  pool.touch(a);  // a hit takes a free cached block back
  EXPECT_EQ(pool.free_blocks(), 0u);
  EXPECT_EQ(pool.cached(11), a);
  pool.release(c);
  EXPECT_TRUE(pool.check_invariants().empty());
}

TEST(KvBlockPoolTest, WithoutPrefixCachingFreedBlocksAreForgotten) {
  KvBlockPool pool(2, false);
  const auto a = pool.allocate();
  pool.cache(a, 5);
  EXPECT_EQ(pool.cached(5), KvBlockPool::kNone);
  pool.release(a);
  EXPECT_TRUE(pool.check_invariants().empty());
}

// The pool's slow twin: the same rules on a std::map and a std::list.
struct SlowPool {
  std::vector<std::uint32_t> refs;
  std::vector<std::optional<std::uint64_t>> hash;
  std::list<std::uint32_t> free;  // least recently freed first
  std::map<std::uint64_t, std::uint32_t> table;
  explicit SlowPool(std::uint32_t blocks) : refs(blocks, 0), hash(blocks) {
    for (std::uint32_t b = 0; b < blocks; ++b) free.push_back(b);
  }
  std::uint32_t cached(std::uint64_t h) const {
    const auto it = table.find(h);
    return it == table.end() ? KvBlockPool::kNone : it->second;
  }
  void touch(std::uint32_t b) {
    if (refs[b]++ == 0) free.remove(b);
  }
  std::uint32_t allocate() {
    const std::uint32_t b = free.front();
    free.pop_front();
    if (hash[b]) table.erase(*hash[b]);
    hash[b].reset();
    refs[b] = 1;
    return b;
  }
  void release(std::uint32_t b) {
    if (--refs[b] == 0) free.push_back(b);
  }
  void cache(std::uint32_t b, std::uint64_t h) {
    if (!hash[b] && table.emplace(h, b).second) hash[b] = h;
  }
};

// Random operations on pools of 1 to 64 blocks, hashes from a space a few times the
// table's size (so probe runs collide, wrap around and are shifted back by deletions):
// every lookup agrees with the twin, and the invariants hold after every operation.
TEST(KvBlockPoolTest, AgreesWithASlowTwinOnRandomOperations) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const auto blocks = static_cast<std::uint32_t>(1 + rng() % 64);
    KvBlockPool pool(blocks, true);
    SlowPool twin(blocks);
    std::vector<std::uint32_t> held;  // one entry per holder
    const std::uint64_t hashes = 1 + rng() % (8 * blocks);
    for (int op = 0; op < 400; ++op) {
      const std::uint64_t h = rng() % hashes * 0x100000001ULL;  // equal low bits: long probe runs
      switch (rng() % 4) {
        case 0:
          if (pool.free_blocks() > 0) {
            const auto b = pool.allocate();
            ASSERT_EQ(b, twin.allocate());
            held.push_back(b);
          }
          break;
        case 1:
          if (!held.empty()) {
            const std::size_t i = rng() % held.size();
            pool.release(held[i]);
            twin.release(held[i]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
          }
          break;
        case 2:
          if (!held.empty()) {
            const auto b = held[rng() % held.size()];
            pool.cache(b, h);
            twin.cache(b, h);
          }
          break;
        default:
          if (const auto b = pool.cached(h); b != KvBlockPool::kNone) {
            pool.touch(b);
            twin.touch(b);
            held.push_back(b);
          }
      }
      ASSERT_EQ(pool.cached(h), twin.cached(h)) << "trial " << trial << " op " << op;
      ASSERT_EQ(pool.free_blocks(), twin.free.size());
      ASSERT_TRUE(pool.check_invariants().empty()) << "trial " << trial << " op " << op;
    }
    for (const auto& [hash, block] : twin.table) ASSERT_EQ(pool.cached(hash), block);
  }
}

TEST(VllmSchedulerTest, ChunksALongPromptOverStepsAndSamplesOnlyAtItsEnd) {
  Requests r;
  VllmScheduler s(limits(8, 2048), 1000);
  s.enqueue(0, r.make(0, 5000), 5000, 0);
  std::vector<std::uint32_t> chunks;
  for (int i = 0; i < 3; ++i) {
    const auto& step = s.schedule();
    ASSERT_EQ(step.chunks.size(), 1u);
    chunks.push_back(step.chunks[0].tokens);
    EXPECT_EQ(step.chunks[0].samples, i == 2);
    EXPECT_FALSE(step.chunks[0].decodes);
    s.complete(1);
  }
  EXPECT_EQ(chunks, (std::vector<std::uint32_t>{2048, 2048, 904}));
  const auto& decode = s.schedule();
  ASSERT_EQ(decode.chunks.size(), 1u);
  EXPECT_TRUE(decode.chunks[0].decodes);
  EXPECT_EQ(decode.chunks[0].context, 5000u);
}

TEST(VllmSchedulerTest, RunningDecodesGoFirstAndWaitingPromptsTakeTheRestOfTheBudget) {
  Requests r;
  VllmScheduler s(limits(8, 512), 1000);
  s.enqueue(0, r.make(0, 100), 100, 0);
  s.schedule();
  s.complete(1);  // request 0 decodes from now
  s.enqueue(1, r.make(1, 600), 600, 0);
  s.enqueue(2, r.make(2, 600), 600, 0);
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(step.chunks[0].slot, 0u);
  EXPECT_TRUE(step.chunks[0].decodes);
  EXPECT_EQ(step.chunks[1].slot, 1u);
  EXPECT_EQ(step.chunks[1].tokens, 511u);  // the budget left; request 2 waits
  EXPECT_EQ(s.waiting(), 1u);
}

TEST(VllmSchedulerTest, RunningRequestsNeverExceedMaxNumSeqs) {
  Requests r;
  VllmScheduler s(limits(2, 2048), 1000);
  for (std::uint32_t i = 0; i < 4; ++i) s.enqueue(i, r.make(i, 10), 10, 0);
  EXPECT_EQ(s.schedule().chunks.size(), 2u);
  EXPECT_EQ(s.running(), 2u);
  EXPECT_EQ(s.waiting(), 2u);
}

TEST(VllmSchedulerTest, WhenBlocksRunOutTheLatestAdmittedIsPreemptedToTheFrontOfTheQueue) {
  Requests r;
  // 4 blocks of 4 tokens: two requests of 7 prompt tokens take 2 blocks each; the first
  // to need a third block preempts the other.
  VllmScheduler s(limits(8, 64, 4), 4);
  s.enqueue(0, r.make(0, 7), 7, 0);
  s.enqueue(1, r.make(1, 7), 7, 0);
  s.enqueue(2, r.make(2, 3), 3, 0);
  EXPECT_EQ(s.schedule().chunks.size(), 2u);  // request 2 does not fit
  s.complete(1);
  EXPECT_EQ(s.schedule().chunks.size(), 2u);  // token 7 still fits each one's second block
  s.complete(1);
  const auto& step = s.schedule();            // token 8 needs a third block each
  ASSERT_EQ(step.preempted, (std::vector<std::uint32_t>{1}));
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].slot, 0u);
  EXPECT_EQ(s.slots(), (std::vector<std::uint32_t>{0, 1, 2}));  // 1 back before 2
  EXPECT_EQ(s.computed(1), 0u);
  EXPECT_TRUE(s.check_invariants().empty());
}

TEST(VllmSchedulerTest, ASharedPrefixIsComputedOnceAndTheLastTokenAlwaysRecomputes) {
  Requests r;
  VllmScheduler s(limits(8, 2048), 100);
  s.enqueue(0, r.make(0, 100, 7, 40), 100, 0);
  EXPECT_EQ(s.schedule().queried_tokens, 100u);
  EXPECT_EQ(s.step().hit_tokens, 0u);
  s.complete(1);
  // Same 40-token system prompt: 2 full blocks (32 tokens) hit.
  s.enqueue(1, r.make(1, 90, 7, 40), 90, 0);
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(step.chunks[1].context, 32u);
  EXPECT_EQ(step.chunks[1].tokens, 58u);
  EXPECT_EQ(step.hit_tokens, 32u);
  EXPECT_EQ(step.queried_tokens, 90u);
  s.complete(1);
  // A prompt that is exactly the cached 32 tokens: at most 31 may hit, so one block
  // (16 tokens) does and 16 are computed.
  s.enqueue(2, r.make(2, 32, 7, 32), 32, 0);
  const auto& again = s.schedule();
  EXPECT_EQ(again.chunks.back().context, 16u);
  EXPECT_EQ(again.chunks.back().tokens, 16u);
  EXPECT_TRUE(s.check_invariants().empty());
}

TEST(VllmSchedulerTest, AFinishedRequestsPrefixStaysCachedUntilItsBlocksAreReused) {
  Requests r;
  VllmScheduler s(limits(8, 2048), 8);  // 128 tokens
  s.enqueue(0, r.make(0, 64, 9, 64), 64, 0);
  s.schedule();
  s.complete(1);
  s.remove(0);
  s.enqueue(1, r.make(1, 65, 9, 64), 65, 0);
  EXPECT_EQ(s.schedule().chunks[0].context, 64u);
  s.complete(1);
  s.remove(1);
  // A 128-token stranger takes every block: the prefix is gone.
  s.enqueue(2, r.make(2, 127), 127, 0);
  s.schedule();
  s.complete(1);
  s.remove(2);
  s.enqueue(3, r.make(3, 65, 9, 64), 65, 0);
  EXPECT_EQ(s.schedule().chunks[0].context, 0u);
}

TEST(VllmSchedulerTest, ASteadyDecodeStepRepeatsUntilABlockWouldRunOut) {
  Requests r;
  // 3 blocks of 4 tokens; one request of 4 prompt tokens decodes: tokens 4..7 need a
  // second block (iteration 0 of the first decode step takes it), 8..11 a third; the
  // iteration computing token 12 would preempt.
  VllmScheduler s(limits(8, 64, 4), 3);
  s.enqueue(0, r.make(0, 4), 4, 0);
  s.schedule();
  s.complete(1);
  const auto& step = s.schedule();
  ASSERT_TRUE(step.decode_only());
  EXPECT_EQ(step.chunks[0].context, 4u);
  EXPECT_EQ(s.steady_iterations(100), 8u);  // tokens 4..11
  EXPECT_EQ(s.steady_iterations(3), 3u);
  s.complete(8);
  EXPECT_EQ(s.computed(0), 12u);
  EXPECT_EQ(s.cache().free_blocks(), 0u);
  EXPECT_TRUE(s.check_invariants().empty());
}

// The scheduler on the span cache and on its block-by-block twin (under both policies),
// driven alike through random arrivals (shared named prefixes, named outputs), steps, folded decode runs,
// mid-run reads of the cache and departures, with KV so short that preemptions are
// frequent: every step, preemption, hit, fold length and routing lookup agrees.
TEST(VllmSchedulerTest, OnTheSpanCacheItSchedulesAsOnTheBlockTwin) {
  std::uint64_t preemptions = 0, hit_tokens = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) + 11);
    const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    const std::uint32_t block = std::uint32_t{1} << pick(5);
    const std::uint32_t blocks = 4 + pick(200);
    VllmLimits l = limits(1 + pick(8), 64 + pick(256), block);
    l.long_prefill_token_threshold = pick(2) == 0 ? 0 : 1 + pick(100);
    l.prefix_caching = trial % 5 != 0;
    l.policy = trial % 3 == 0 ? VllmPolicy::kPriority : VllmPolicy::kFcfs;
    VllmScheduler spans(l, blocks);
    VllmScheduler twin(l, std::make_unique<KvBlockCache>(blocks, block, l.prefix_caching));
    std::deque<TokenStream> streams;
    std::uint32_t prompt = 0;  // the last stream's
    const auto make = [&]() -> TokenStream& {
      std::vector<traces::ContentSegment> prefix;
      for (std::uint32_t r = pick(3); r > 0; --r) prefix.push_back({1 + rng() % 3, 1 + pick(4 * block)});
      const std::uint64_t output = pick(3) == 0 ? 1 + rng() % 3 : 0;
      prompt = 1 + pick(6 * block);
      return streams.emplace_back(streams.size(), prompt, prefix, output);
    };
    std::vector<std::uint32_t> here;
    std::uint32_t next_slot = 0;
    for (int op = 0; op < 200; ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      const std::uint32_t kind = pick(8);
      if (kind < 2) {
        const TokenStream& stream = make();
        if (block * blocks < prompt + 1) continue;  // never fits: the cluster drops such requests
        const VllmRank rank{static_cast<std::int32_t>(pick(3)), rng() % 100};
        spans.enqueue(next_slot, stream, prompt, 0, rank);
        twin.enqueue(next_slot, stream, prompt, 0, rank);
        here.push_back(next_slot++);
      } else if (kind < 3 && !here.empty()) {
        const std::size_t i = pick(static_cast<std::uint32_t>(here.size()));
        spans.remove(here[i]);
        twin.remove(here[i]);
        here.erase(here.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (kind < 4 && !here.empty()) {
        const TokenStream& stream = make();
        const std::uint32_t tokens = pick(8 * block);
        ASSERT_EQ(spans.cached_prefix_tokens(stream, tokens), twin.cached_prefix_tokens(stream, tokens)) << where;
      } else {
        const auto& a = spans.schedule();
        const auto& b = twin.schedule();
        ASSERT_EQ(a.chunks.size(), b.chunks.size()) << where;
        for (std::size_t c = 0; c < a.chunks.size(); ++c) {
          ASSERT_EQ(a.chunks[c].slot, b.chunks[c].slot) << where;
          ASSERT_EQ(a.chunks[c].tokens, b.chunks[c].tokens) << where;
          ASSERT_EQ(a.chunks[c].context, b.chunks[c].context) << where;
          ASSERT_EQ(a.chunks[c].samples, b.chunks[c].samples) << where;
        }
        ASSERT_EQ(a.preempted, b.preempted) << where;
        ASSERT_EQ(a.hit_tokens, b.hit_tokens) << where;
        preemptions += a.preempted.size();
        hit_tokens += a.hit_tokens;
        if (a.chunks.empty()) continue;
        const std::uint32_t limit = 1 + pick(40);
        const std::uint32_t steady = spans.steady_iterations(limit);
        ASSERT_EQ(steady, twin.steady_iterations(limit)) << where;
        const std::uint32_t run = 1 + pick(steady);
        if (run > 1 && pick(2) == 0) {
          const std::uint32_t begun = 1 + pick(run);
          spans.materialize(begun);
          twin.materialize(begun);
          ASSERT_EQ(spans.used_blocks(run), twin.used_blocks(run)) << where;
        }
        spans.complete(run);
        twin.complete(run);
      }
      ASSERT_EQ(spans.cache().free_blocks(), twin.cache().free_blocks()) << where;
      ASSERT_EQ(spans.cache().evictions(), twin.cache().evictions()) << where;
      const auto problems = spans.check_invariants();
      ASSERT_TRUE(problems.empty()) << where << ": " << problems.front();
      ASSERT_TRUE(twin.check_invariants().empty()) << where;
    }
  }
  EXPECT_GT(preemptions, 100u);
  EXPECT_GT(hit_tokens, 1000u);
}

// Requests leaving while they wait (request time-outs) leave stale entries in the waiting
// queue rather than rewriting it. Against a plain list rewritten at every departure, with
// slots reused as the cluster reuses them (a slot that left comes back as a new request,
// possibly while its stale entry still waits): the same requests wait, in the same order,
// and are admitted and preempted alike.
TEST(VllmSchedulerTest, RequestsLeavingWhileWaitingKeepTheQueueOrderOfAPlainList) {
  std::uint64_t stale_reuses = 0, admitted = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) + 7);
    const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    VllmLimits l = limits(1 + pick(4), 64 + pick(128), 4);
    VllmScheduler s(l, 8 + pick(40));
    Requests requests;
    std::vector<std::uint32_t> waiting;  // the twin: the waiting order
    std::vector<std::uint32_t> running;
    std::vector<std::uint32_t> gone;     // slots free for reuse, some with stale entries
    std::uint32_t next_slot = 0;
    // Some trials build a backlog of hundreds, leaving from anywhere in it (stale entries
    // are then compacted away); the others mostly from the front.
    const bool backlog = trial % 4 == 0;
    for (int op = 0; op < (backlog ? 2000 : 300); ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      std::uint32_t kind = pick(10);
      if (backlog) kind = kind < 5 ? 0 : kind < 9 ? 4 : 9;  // enqueue, leave, step
      if (kind < 4) {  // enqueue
        std::uint32_t slot = next_slot;
        if (!gone.empty() && pick(2) == 0) {
          const std::size_t i = pick(static_cast<std::uint32_t>(gone.size()));
          slot = gone[i];
          gone.erase(gone.begin() + static_cast<std::ptrdiff_t>(i));
          ++stale_reuses;
        } else {
          ++next_slot;
        }
        const std::uint32_t prompt = 1 + pick(20);
        s.enqueue(slot, requests.make(slot, prompt), prompt, 0);
        waiting.push_back(slot);
      } else if (kind < 7 && !(waiting.empty() && running.empty())) {
        // Most leave while waiting (time-outs come to the longest waiting first, and to others).
        std::vector<std::uint32_t>& from = !waiting.empty() && pick(4) != 0 ? waiting : running;
        if (from.empty()) continue;
        const std::size_t i = pick(2) == 0 && !backlog ? 0 : pick(static_cast<std::uint32_t>(from.size()));
        const std::uint32_t slot = from[i];
        s.remove(slot);
        from.erase(from.begin() + static_cast<std::ptrdiff_t>(i));
        gone.push_back(slot);
      } else {
        const auto& step = s.schedule();
        // Admitted: the waiting list's front, in order; preempted: back to its front.
        std::vector<std::uint32_t> chunked;
        for (const auto& chunk : step.chunks) chunked.push_back(chunk.slot);
        std::size_t taken = 0;
        while (taken < waiting.size() && std::find(chunked.begin(), chunked.end(), waiting[taken]) != chunked.end()) {
          running.push_back(waiting[taken++]);
        }
        admitted += taken;
        waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(taken));
        for (const std::uint32_t slot : step.preempted) {
          running.erase(std::find(running.begin(), running.end(), slot));
          waiting.insert(waiting.begin(), slot);
        }
        if (!step.chunks.empty()) s.complete(1);
      }
      ASSERT_EQ(s.waiting(), waiting.size()) << where;
      ASSERT_EQ(s.running(), running.size()) << where;
      const std::vector<std::uint32_t> slots = s.slots();
      ASSERT_EQ(std::vector<std::uint32_t>(slots.begin() + static_cast<std::ptrdiff_t>(running.size()), slots.end()),
                waiting)
          << where;
      const auto problems = s.check_invariants();
      ASSERT_TRUE(problems.empty()) << where << ": " << problems.front();
    }
  }
  EXPECT_GT(stale_reuses, 1000u);
  EXPECT_GT(admitted, 1000u);
}

}  // namespace
}  // namespace meshsim::cluster
