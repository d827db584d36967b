// The host KV tier in the vLLM scheduler (vLLM's CPU offloading through its
// OffloadingConnector): a hit after the GPU hit is loaded, not computed, and its request
// waits for the copy; lookups are put off while a block is being loaded; and, as the only
// cache with free copies, the tier's hits on Mooncake's conversation trace match an
// offline LRU replay of the trace's block hashes.
#include "sim/batching/vllm_scheduler.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <list>
#include <unordered_map>

#include "tests/shared_data.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::cluster {
namespace {

using engine::SimTime;

VllmLimits tier_limits(std::uint64_t capacity_tokens, std::uint32_t block_tokens, bool prefix_caching) {
  VllmLimits l;
  l.max_num_seqs = 8;
  l.max_num_batched_tokens = 4096;
  l.block_size = 16;
  l.prefix_caching = prefix_caching;
  l.host_kv.capacity_tokens = capacity_tokens;
  l.host_kv.block_tokens = block_tokens;
  l.host_kv.bytes_per_token = 1e5;
  l.host_kv.link_bytes_per_s = 1e9;  // 64 tokens (6.4 MB) in 6.4 ms
  return l;
}

struct Streams {
  std::deque<TokenStream> streams;
  // `shared` tokens of named run `id`, then the request's own.
  const TokenStream& make(std::uint64_t request, std::uint32_t prompt, std::uint64_t id, std::uint32_t shared) {
    return streams.emplace_back(request, prompt, std::vector<traces::ContentSegment>{{id, shared}}, 0);
  }
};

// Prefills a request alone and lets it leave: its full blocks are stored in the tier.
void serve_alone(VllmScheduler& s, std::uint32_t slot, const TokenStream& stream, std::uint32_t prompt, SimTime now) {
  s.enqueue(slot, stream, prompt, 0);
  s.advance(now);
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  ASSERT_EQ(step.chunks[0].tokens, prompt);
  s.complete(1);
  s.remove(slot);
}

TEST(HostKvTierTest, AHostHitIsLoadedNotComputedAndItsRequestWaitsForTheCopy) {
  VllmScheduler s(tier_limits(10'000, 64, false), 1000);
  Streams r;
  serve_alone(s, 0, r.make(1, 300, 7, 300), 300, SimTime::zero());
  HostKvCounts first = s.take_host_counts();
  EXPECT_EQ(first.stored_bytes, 256u * 100'000);  // four whole blocks of 64 of its 300 tokens
  EXPECT_EQ(first.hit_tokens, 0u);

  // The same 300 tokens, then 50 of its own: 256 tokens come from host memory.
  s.enqueue(1, r.make(2, 350, 7, 300), 350, 0);
  const SimTime t = SimTime::from_seconds(1);
  s.advance(t);
  EXPECT_TRUE(s.schedule().chunks.empty()) << "it waits for the load";
  EXPECT_EQ(s.loading(), 1u);
  ASSERT_TRUE(s.next_load_done());
  EXPECT_EQ(*s.next_load_done(), t + SimTime::from_us(25'600));
  EXPECT_TRUE(s.check_invariants().empty());
  s.advance(t + SimTime::from_us(25'599));
  EXPECT_EQ(s.loading(), 1u);
  EXPECT_TRUE(s.schedule().chunks.empty());
  s.advance(t + SimTime::from_us(25'600));
  EXPECT_EQ(s.loading(), 0u);
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].context, 256u);
  EXPECT_EQ(step.chunks[0].tokens, 350u - 256u) << "the loaded tokens are not prefilled again";
  const HostKvCounts second = s.take_host_counts();
  EXPECT_EQ(second.hit_tokens, 256u);
  EXPECT_EQ(second.loads, 1u);
  EXPECT_EQ(second.loaded_bytes, 256u * 100'000);
  EXPECT_EQ(second.load_time, SimTime::from_us(25'600));
  EXPECT_TRUE(s.check_invariants().empty());
}

TEST(HostKvTierTest, AWholePromptLoadedComputesItsLastTokenToSample) {
  VllmScheduler s(tier_limits(10'000, 64, false), 1000);
  Streams r;
  serve_alone(s, 0, r.make(1, 256, 7, 256), 256, SimTime::zero());
  s.enqueue(1, r.make(2, 256, 7, 256), 256, 0);
  s.advance(SimTime::from_seconds(1));
  EXPECT_TRUE(s.schedule().chunks.empty());
  s.advance(SimTime::from_seconds(2));
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].context, 255u);
  EXPECT_EQ(step.chunks[0].tokens, 1u);
  EXPECT_TRUE(step.chunks[0].samples);
}

TEST(HostKvTierTest, LessThanAWholeHostBlockBeyondTheGpuHitIsNotLoaded) {
  // GPU prefix caching on: the first request's blocks stay cached on the GPU, so the second
  // finds everything the tier has there and loads nothing.
  VllmScheduler s(tier_limits(10'000, 64, true), 1000);
  Streams r;
  serve_alone(s, 0, r.make(1, 300, 7, 300), 300, SimTime::zero());
  s.enqueue(1, r.make(2, 350, 7, 300), 350, 0);
  s.advance(SimTime::from_seconds(1));
  const auto& step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].context, 288u) << "18 GPU blocks of 16 hit";
  EXPECT_EQ(s.take_host_counts().loads, 0u);
}

TEST(HostKvTierTest, ALookupIsPutOffWhileItsBlocksAreBeingLoadedAndTheQueueGoesOn) {
  VllmScheduler s(tier_limits(10'000, 64, true), 20);
  Streams r;
  serve_alone(s, 0, r.make(1, 192, 7, 192), 192, SimTime::zero());
  s.enqueue(9, r.make(9, 320, 99, 0), 320, 0);  // takes every GPU block: the first request's copies go
  s.advance(SimTime::from_ms(10));
  ASSERT_EQ(s.schedule().chunks.size(), 1u);
  s.complete(1);
  s.remove(9);
  s.enqueue(1, r.make(2, 200, 7, 192), 200, 0);
  s.enqueue(2, r.make(3, 200, 7, 192), 200, 0);
  s.enqueue(3, r.make(4, 20, 55, 0), 20, 0);
  s.advance(SimTime::from_seconds(1));
  const auto& step = s.schedule();
  EXPECT_EQ(s.loading(), 1u) << "the first loads";
  ASSERT_EQ(step.chunks.size(), 1u) << "the second is put off, the third runs";
  EXPECT_EQ(step.chunks[0].slot, 3u);
  EXPECT_EQ(s.take_host_counts().loads_deferred, 1u);
  EXPECT_TRUE(s.check_invariants().empty());
  s.complete(1);
  s.remove(3);
  s.advance(SimTime::from_seconds(2));
  const auto& next = s.schedule();
  ASSERT_EQ(next.chunks.size(), 2u);
  EXPECT_EQ(next.chunks[0].slot, 1u);
  EXPECT_EQ(next.chunks[0].context, 192u);
  EXPECT_EQ(next.chunks[1].slot, 2u);
  EXPECT_EQ(next.chunks[1].context, 192u) << "it finds the loaded blocks on the GPU";
}

// An offline LRU replay of Mooncake's block hashes, one request at a time: a request hits
// its leading blocks present (the last, partial one counts its tokens), then every block
// it names becomes the most recent.
double offline_lru_hit_share(const std::vector<traces::TraceRequest>& requests, std::uint64_t capacity_blocks) {
  std::list<std::uint64_t> order;  // least recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
  std::uint64_t hit = 0, total = 0;
  for (const auto& request : requests) {
    std::uint64_t leading = 0, tokens = 0;
    bool hitting = true;
    for (const auto& segment : request.prefix) {
      hitting = hitting && where.contains(segment.id);
      if (hitting) leading += segment.tokens;
      tokens += segment.tokens;
    }
    hit += leading;
    total += request.prompt_tokens;
    for (const auto& segment : request.prefix) {
      if (auto it = where.find(segment.id); it != where.end()) order.erase(it->second);
      where[segment.id] = order.insert(order.end(), segment.id);
      if (order.size() > capacity_blocks) {
        where.erase(order.front());
        order.pop_front();
      }
    }
  }
  return static_cast<double>(hit) / static_cast<double>(total);
}

// The tier as the only cache (no GPU prefix caching), free copies, one request at a time
// with one output token (the replay stores prompts only): its share of prompt tokens loaded.
double tier_hit_share(const std::vector<traces::TraceRequest>& requests, std::uint64_t capacity_tokens) {
  VllmLimits l = tier_limits(capacity_tokens, traces::kMooncakeBlockTokens, false);
  l.max_num_batched_tokens = 1u << 20;
  l.host_kv.link_bytes_per_s = 0;
  VllmScheduler s(l, (1u << 20) / 16);
  std::uint64_t prompt = 0;
  SimTime now;
  for (const auto& request : requests) {
    const TokenStream stream(request.id, request.prompt_tokens, request.prefix, 0);
    prompt += request.prompt_tokens;
    s.enqueue(0, stream, request.prompt_tokens, 0);
    while (true) {
      s.advance(now);
      now += SimTime::from_us(1);
      const auto& step = s.schedule();
      if (step.chunks.empty()) continue;  // loading
      s.complete(1);
      if (step.chunks[0].samples) break;
    }
    s.remove(0);
  }
  return static_cast<double>(s.take_host_counts().hit_tokens) / static_cast<double>(prompt);
}

TEST(HostKvTierTest, AsTheOnlyCacheItHitsWhatAnOfflineLruReplayOfMooncakesHashesDoes) {
  const std::string path = meshsim::testing::shared_path("traces/mooncake_fast25_conversation.jsonl");
  MESHSIM_NEED_SHARED_FILE(path);
  auto source = traces::open_trace_file(traces::TraceFileSpec{path, traces::TraceFormat::kMooncakeJsonl, {}});
  ASSERT_TRUE(source) << source.error().message;
  std::vector<traces::TraceRequest> requests;
  for (;;) {
    auto next = (*source)->next();
    ASSERT_TRUE(next) << next.error().message;
    if (!*next) break;
    requests.push_back(std::move(**next));
  }
  ASSERT_GT(requests.size(), 10'000u);
  for (const std::uint64_t millions : {1, 3, 10, 50}) {
    const std::uint64_t tokens = millions * 1'000'000;
    const double offline = offline_lru_hit_share(requests, tokens / traces::kMooncakeBlockTokens);
    const double tier = tier_hit_share(requests, tokens);
    std::printf("%2lluM tokens: offline LRU %.2f%%, host tier %.2f%%\n", static_cast<unsigned long long>(millions),
                100 * offline, 100 * tier);
    EXPECT_NEAR(tier, offline, 0.01) << millions << "M tokens";
  }
}

}  // namespace
}  // namespace meshsim::cluster
