// KvSpanCache against its slow twin KvBlockCache (vLLM's blocks, one by one): random
// requests sharing named runs, conversations whose next turn repeats an output, and own
// tokens, under random admissions, growth, preemptions and departures on caches of a few
// blocks to a few hundred. Every prefix found, free count, eviction count and routing
// lookup must agree, and both caches' invariants hold after every operation. The scheduler
// on each cache is compared in vllm_scheduler_test.cpp, the whole cluster by the goldens.
#include <gtest/gtest.h>

#include <deque>
#include <iostream>
#include <memory>
#include <random>

#include "sim/batching/kv_span_cache.hpp"
#include "tests/sim/kv_block_cache.hpp"

namespace meshsim::cluster {
namespace {

// Requests whose prompts start with one of a few named prefixes, cut or extended, some
// named outputs among them (and repeated as a later prompt's run).
struct Workload {
  std::mt19937_64 rng;
  std::uint32_t block_size;
  std::vector<std::vector<traces::ContentSegment>> prefixes;
  std::deque<TokenStream> streams;
  std::deque<std::uint32_t> prompts;
  std::uint64_t next_id = 1;

  Workload(std::uint64_t seed, std::uint32_t block) : rng(seed), block_size(block) {
    const auto templates = 1 + rng() % 4;
    for (std::uint64_t t = 0; t < templates; ++t) {
      std::vector<traces::ContentSegment> prefix;
      const auto runs = rng() % 4;
      for (std::uint64_t r = 0; r < runs; ++r) {
        prefix.push_back({1 + rng() % 5, static_cast<std::uint32_t>(rng() % (3 * block_size + 2))});
      }
      prefixes.push_back(prefix);
    }
  }
  std::uint32_t pick(std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); }
  // A new request's stream, and its prompt length.
  std::pair<const TokenStream*, std::uint32_t> make() {
    auto prefix = prefixes[pick(static_cast<std::uint32_t>(prefixes.size()))];
    if (rng() % 3 == 0) prefix.push_back({100 + rng() % 3, static_cast<std::uint32_t>(1 + rng() % (2 * block_size))});
    std::uint32_t named = 0;
    for (const auto& run : prefix) named += run.tokens;
    const std::uint32_t prompt = std::max<std::uint32_t>(1, named + pick(2 * block_size + 1) - std::min(named, block_size));
    const std::uint64_t output = rng() % 3 == 0 ? 100 + rng() % 3 : 0;
    const std::uint64_t id = next_id++;
    streams.emplace_back(id, prompt, prefix, output);
    prompts.push_back(prompt);
    return {&streams.back(), prompt};
  }
};

struct Request {
  std::uint32_t span_table = 0, block_table = 0;
  std::uint32_t tokens = 0;    // known
  std::uint32_t computed = 0;  // 0: holds nothing
};

TEST(KvSpanCacheTest, AgreesWithTheBlockTwinOnRandomRequests) {
  const int trials = 400;
  // What the trials exercised, all of it: hits, hits on free blocks, evictions, routing hits.
  std::uint64_t hits = 0, free_hits_taken = 0, evictions = 0, routed = 0;
  for (int trial = 0; trial < trials; ++trial) {
    Workload w(static_cast<std::uint64_t>(trial) * 7919 + 1, std::uint32_t{1} << (trial % 5));
    const std::uint32_t blocks = 1 + w.pick(trial % 3 == 0 ? 300 : 40);
    const bool caching = trial % 7 != 0;
    KvSpanCache spans(blocks, w.block_size, caching);
    KvBlockCache twin(blocks, w.block_size, caching);
    std::vector<Request> open;
    const auto blocks_for = [&](std::uint32_t tokens) { return (tokens + w.block_size - 1) / w.block_size; };
    for (int op = 0; op < 300; ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      const std::uint32_t kind = w.pick(10);
      if (kind < 2 || open.empty()) {
        const auto [stream, prompt] = w.make();
        open.push_back(Request{spans.open(*stream), twin.open(*stream), prompt, 0});
      } else if (kind < 6) {
        // Admission with its prefix hits (nothing computed), or a further chunk or decode.
        Request& r = open[w.pick(static_cast<std::uint32_t>(open.size()))];
        std::uint32_t hit_blocks = 0, free_hits = 0;
        if (r.computed == 0) {
          const std::uint32_t lookable = (r.tokens - 1) / w.block_size;
          const auto a = spans.find_prefix(r.span_table, lookable);
          const auto b = twin.find_prefix(r.block_table, lookable);
          ASSERT_EQ(a.blocks, b.blocks) << where;
          ASSERT_EQ(a.free, b.free) << where;
          hit_blocks = a.blocks;
          free_hits = a.free;
        }
        const std::uint32_t from = r.computed + hit_blocks * w.block_size;
        const std::uint32_t tokens = 1 + w.pick(3 * w.block_size);
        const std::uint32_t held = spans.table_blocks(r.span_table) + hit_blocks;
        const std::uint32_t need = blocks_for(from + tokens) > held ? blocks_for(from + tokens) - held : 0;
        if (need + free_hits > spans.free_blocks()) continue;
        hits += hit_blocks;
        free_hits_taken += free_hits;
        if (hit_blocks > 0) {
          spans.take_prefix(r.span_table);
          twin.take_prefix(r.block_table);
        }
        spans.grow(r.span_table, need);
        twin.grow(r.block_table, need);
        r.computed = from + tokens;
        r.tokens = std::max(r.tokens, r.computed);  // output tokens past the prompt
        spans.register_full(r.span_table, r.computed / w.block_size);
        twin.register_full(r.block_table, r.computed / w.block_size);
      } else if (kind < 8) {
        Request& r = open[w.pick(static_cast<std::uint32_t>(open.size()))];
        spans.release(r.span_table);
        twin.release(r.block_table);
        r.computed = 0;
      } else if (kind < 9) {
        const std::size_t i = w.pick(static_cast<std::uint32_t>(open.size()));
        spans.close(open[i].span_table);
        twin.close(open[i].block_table);
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        const auto [stream, prompt] = w.make();
        const std::uint32_t lookable = w.pick(prompt + 1);
        const std::uint32_t cached = spans.cached_prefix_blocks(*stream, lookable);
        ASSERT_EQ(cached, twin.cached_prefix_blocks(*stream, lookable)) << where;
        routed += cached;
      }
      ASSERT_EQ(spans.free_blocks(), twin.free_blocks()) << where;
      ASSERT_EQ(spans.evictions(), twin.evictions()) << where;
      for (const Request& r : open) ASSERT_EQ(spans.table_blocks(r.span_table), twin.table_blocks(r.block_table)) << where;
      const auto problems = spans.check_invariants();
      ASSERT_TRUE(problems.empty()) << where << ": " << problems.front();
      ASSERT_TRUE(twin.check_invariants().empty()) << where;
    }
    evictions += spans.evictions();
  }
  EXPECT_GT(hits, 1000u);
  EXPECT_GT(free_hits_taken, 100u);
  EXPECT_GT(evictions, 1000u);
  EXPECT_GT(routed, 100u);
  std::cout << "hits " << hits << ", on free blocks " << free_hits_taken << ", evictions " << evictions
            << ", routing hits " << routed << "\n";
}

}  // namespace
}  // namespace meshsim::cluster
