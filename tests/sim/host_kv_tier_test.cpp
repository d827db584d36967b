// The host KV tier in the vLLM scheduler (vLLM's CPU offloading through its
// OffloadingConnector): a hit after the GPU hit is loaded, not computed, and its request
// waits for the copy; lookups are put off while a block is being loaded; and, as the only
// cache with free copies, the tier's hits on Mooncake's conversation trace match an
// offline LRU replay of the trace's block hashes.
#include "sim/batching/vllm_scheduler.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>

#include "tests/shared_data.hpp"
#include "tests/sim/offline_lru_replay.hpp"
#include "tests/sim/llm_test_support.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::cluster {
namespace {

using engine::SimTime;

// The test cluster's toy model: K and V of 8 layers of 8 heads of 128 in 2 bytes.
double base_config_kv_bytes_per_token() { return testing::base_config({}).model.kv_bytes_per_token(); }

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
  std::vector<const traces::TraceRequest*> in_order;
  for (const auto& request : requests) in_order.push_back(&request);
  for (const std::uint64_t millions : {1, 3, 10, 50}) {
    const std::uint64_t tokens = millions * 1'000'000;
    const double offline = meshsim::testing::offline_lru_hit_share(in_order, tokens / traces::kMooncakeBlockTokens);
    const double tier = tier_hit_share(requests, tokens);
    std::printf("%2lluM tokens: offline LRU %.2f%%, host tier %.2f%%\n", static_cast<unsigned long long>(millions),
                100 * offline, 100 * tier);
    EXPECT_NEAR(tier, offline, 0.01) << millions << "M tokens";
  }
}

// Through the cluster: a request whose shared prefix another request stored in host memory
// gets its first token sooner with the tier exactly when loading the prefix is faster than
// computing it (GPU prefix caching off, so the host tier is the only way to reuse it).
TEST(HostKvTierTest, AHostHitLowersTtftExactlyWhenTheLoadIsFasterThanRecomputing) {
  const auto second_ttft = [](const std::optional<HostKvOptions>& tier) {
    LlmClusterConfig config = testing::base_config({{InstanceTag::kMixed, 1}});
    config.scheduler = BatchScheduler::kVllm;
    config.vllm.max_num_batched_tokens = 8192;
    config.vllm.prefix_caching = false;
    if (tier) config.vllm.host_kv = *tier;
    // The second arrives long after the first left, with the first's 4096 tokens and 100 of its own.
    testing::ListSource source({{0.0, 4096, 2}, {10.0, 4196, 2}}, {{{5, 4096}}, {{5, 4096}}});
    const auto result = testing::run(config, source);
    return result.records.at(1).ttft()->seconds();
  };
  const double without = second_ttft(std::nullopt);
  // SimplePerf: 10 ms + 1 ms per 100 tokens, so the prefix costs 40.96 ms to compute again.
  const double recompute_s = 4096 / 100.0 / 1e3;
  const double bytes = 4096.0 * base_config_kv_bytes_per_token();
  int faster = 0, slower = 0;
  for (const double gb_per_s : {0.01, 0.1, 0.3, 1.0, 10.0, 0.0}) {
    for (const std::int64_t latency_ms : {0, 5, 60}) {
      HostKvOptions tier;
      tier.capacity_tokens = 100'000;
      tier.link_gb_per_s = gb_per_s;
      tier.load_latency = SimTime::from_ms(latency_ms);
      const double load_s = latency_ms / 1e3 + (gb_per_s > 0 ? bytes / (gb_per_s * 1e9 * 8) : 0.0);
      const double with = second_ttft(tier);
      SCOPED_TRACE(std::to_string(gb_per_s) + " GB/s, " + std::to_string(latency_ms) + " ms: load " +
                   std::to_string(load_s) + " s");
      if (load_s < recompute_s - 1e-3) {
        EXPECT_LT(with, without);
        EXPECT_NEAR(with, without - recompute_s + load_s, 2e-3) << "the load replaces the prefix's compute";
        ++faster;
      } else if (load_s > recompute_s + 1e-3) {
        EXPECT_GT(with, without);
        ++slower;
      }
    }
  }
  EXPECT_GT(faster, 3);
  EXPECT_GT(slower, 3);
}

}  // namespace
}  // namespace meshsim::cluster
