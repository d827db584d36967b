#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/step_segment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "tests/sim/llm_test_support.hpp"
#include "traces/generated_source.hpp"

namespace meshsim::cluster {
namespace {

using metrics::RequestStatus;
using testing::base_config;
using testing::ListSource;
using testing::run;

TEST(LlmClusterTest, OneRequestOnAMixedInstanceFollowsThePerformanceModel) {
  ListSource source({{0.0, 1000, 3}});
  const auto result = run(base_config({{InstanceTag::kMixed, 1}}), source);
  const RequestRecord& r = result.records.at(0);
  ASSERT_EQ(r.status, RequestStatus::kCompleted);
  EXPECT_EQ(*r.ttft(), SimTime::from_ms(20));  // 10 + 1000 / 100
  // Two decode iterations reading 1,001 then 1,002 tokens of context.
  EXPECT_EQ(*r.e2e(), SimTime::from_ms(20) + SimTime::from_us(21'001) + SimTime::from_us(21'002));
  EXPECT_EQ(r.tbt_max, SimTime::from_us(21'002));
}

TEST(LlmClusterTest, ARequestReachesTheEngineAfterItsPreQueueCost) {
  // The API server's 5 ms plus 10 us per prompt token come before the engine's queue.
  auto config = base_config({{InstanceTag::kMixed, 1}});
  const RequestCosts costs{5.0, 10.0};
  config.perf = std::make_shared<testing::SimplePerf>(10.0, 100.0, 20.0, 1000.0, costs);
  ListSource source({{0.0, 1000, 3}, {0.010, 500, 2}});
  const auto result = run(config, source);
  // 5 + 1000 * 0.01 = 15 ms before the first prefill (20 ms); the second request reaches
  // the engine at 10 + 5 + 5 = 20 ms, mid-prefill, and is prefilled when that ends.
  EXPECT_EQ(*result.records.at(0).ttft(), SimTime::from_ms(35));
  EXPECT_EQ(result.records.at(1).arrival, SimTime::from_ms(10));
  EXPECT_GE(*result.records.at(1).ttft(), SimTime::from_ms(25 + 15));
  EXPECT_EQ(result.counts.completed, 2u);
}

TEST(LlmClusterTest, FoldingDecodeIterationsChangesNoResultAndSavesEvents) {
  traces::GeneratorSpec spec;
  spec.arrivals.kind = traces::ArrivalSpec::Kind::kPoisson;
  spec.arrivals.rate_per_s = 20;
  spec.prompt_tokens = traces::LengthSpec{traces::LengthSpec::Kind::kUniform, 1, 10, 3000, {}};
  spec.output_tokens = traces::LengthSpec{traces::LengthSpec::Kind::kUniform, 1, 1, 400, {}};
  spec.requests = 3000;
  auto config = base_config({{InstanceTag::kMixed, 3}, {InstanceTag::kPrompt, 2}, {InstanceTag::kToken, 2}});
  config.batching.max_batch_tokens = 1024;  // long prompts run alone and preempt decodes
  config.kv_capacity_tokens = 30'000;        // and KV memory binds
  for (const auto allocation : {KvAllocation::kReserve, KvAllocation::kOnDemand}) {
    SCOPED_TRACE(kKvAllocationNames.name(allocation));
    config.kv_allocation = allocation;
    traces::GeneratedSource folded_source(spec, 5);
    config.fold_decode = true;
    const auto folded = run(config, folded_source);
    traces::GeneratedSource unfolded_source(spec, 5);
    config.fold_decode = false;
    const auto unfolded = run(config, unfolded_source);
    ASSERT_EQ(folded.records.size(), 3000u);
    ASSERT_EQ(unfolded.records.size(), 3000u);
    for (const auto& [id, a] : folded.records) {
      const auto& b = unfolded.records.at(id);
      ASSERT_EQ(a.status, b.status) << id;
      ASSERT_EQ(a.first_token, b.first_token) << id;
      ASSERT_EQ(a.finished, b.finished) << id;
      ASSERT_EQ(a.tbt_max, b.tbt_max) << id;
      ASSERT_EQ(a.pauses, b.pauses) << id;
      ASSERT_EQ(a.instance, b.instance) << id;
    }
    // On-demand KV runs unfolded for now (see SplitwiseEngine::steady_iterations).
    if (allocation == KvAllocation::kReserve) {
      EXPECT_LT(folded.events * 3, unfolded.events) << "folding should remove most decode events";
    }
  }
}

// A performance model that counts the iterations it prices.
class CountingPerf final : public PerfModel {
 public:
  RequestCosts request_costs() const override { return inner_.request_costs(); }
  double prefill_ms(const PrefillWork& w) const override { return inner_.prefill_ms(w); }
  double decode_ms(const DecodeWork& w) const override { return inner_.decode_ms(w); }
  double iteration_ms(const PrefillWork& p, const DecodeWork& d) const override {
    ++priced;
    return inner_.iteration_ms(p, d);
  }
  mutable std::uint64_t priced = 0;

 private:
  testing::SimplePerf inner_;
};

TEST(LlmClusterTest, AFoldCutShortPricesAboutTheIterationsItRan) {
  // One long output decodes while a short request arrives every half second (about 25
  // decode iterations apart), each cutting the folded run short. Folding must price
  // O(iterations run), not a fixed segment length per cut: at most twice the iterations
  // run (the unfolded run prices each once) plus a first segment per cut.
  std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows{{0.0, 100, 2000}};
  for (int i = 1; i <= 80; ++i) rows.emplace_back(0.5 * i, 100, 2);
  for (const auto scheduler : {BatchScheduler::kSplitwise, BatchScheduler::kVllm}) {
    SCOPED_TRACE(static_cast<int>(scheduler));
    std::uint64_t priced[2] = {0, 0};
    for (const bool fold : {true, false}) {
      auto config = base_config({{InstanceTag::kMixed, 1}});
      config.scheduler = scheduler;
      config.fold_decode = fold;
      const auto perf = std::make_shared<CountingPerf>();
      config.perf = perf;
      ListSource source(rows);
      ASSERT_EQ(run(config, source).counts.completed, rows.size());
      priced[fold ? 0 : 1] = perf->priced;
    }
    EXPECT_GE(priced[1], 2000u);
    const std::uint64_t cuts = rows.size() - 1;
    EXPECT_LE(priced[0], 2 * priced[1] + StepSegment::kFirstSegment * (cuts + 1))
        << "folded " << priced[0] << ", unfolded " << priced[1];
  }
}

TEST(LlmClusterTest, PoolsOnDifferentGpusHaveTheirOwnServersPricesKvAndCosts) {
  // SplitwiseSim's HA: prompt instances on smaller GPUs (TP 4, two to a server, 10 GiB
  // each, a slower prefill), token instances on the cluster's SKU (TP 8).
  auto config = base_config({{InstanceTag::kPrompt, 2}, {InstanceTag::kToken, 3}});
  config.kv_capacity_tokens.reset();
  SkuSpec small = config.sku;
  small.name = "small-gpu";
  small.hbm_gib_per_gpu = 10;
  small.cost_per_hour = 2.0;
  config.pool_hardware.push_back({InstanceTag::kPrompt, small, 4, std::make_shared<testing::SimplePerf>(30.0), "simple"});
  engine::Simulation sim(1);
  testing::Collector collector;
  ListSource source({{0.0, 1000, 3}});
  replay::Replay replay(sim, source, llm_cluster_factory(config), {}, collector);
  auto& cluster = dynamic_cast<const LlmCluster&>(replay.serving());
  // KV: each pool's HBM less the weights (2 GB), 32 KiB a token.
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_EQ(cluster.fleet().hardware().of(InstanceTag::kPrompt).kv_capacity_tokens, static_cast<std::uint64_t>((40 * gib - 2e9) / 32768));
  EXPECT_EQ(cluster.fleet().hardware().of(InstanceTag::kToken).kv_capacity_tokens, static_cast<std::uint64_t>((640 * gib - 2e9) / 32768));
  EXPECT_EQ(cluster.kv_total_tokens(), 2 * cluster.fleet().hardware().of(InstanceTag::kPrompt).kv_capacity_tokens +
                                           3 * cluster.fleet().hardware().of(InstanceTag::kToken).kv_capacity_tokens);
  EXPECT_EQ(cluster.fleet().servers().count(), 4u);  // both prompt instances on one small server
  EXPECT_FALSE(cluster.fleet().hardware().same(InstanceTag::kPrompt, InstanceTag::kToken));
  ASSERT_TRUE(replay.run());
  const RequestRecord& r = collector.result.records.at(0);
  EXPECT_EQ(*r.ttft(), SimTime::from_ms(40));  // the small GPUs' prefill: 30 + 1000 / 100
  EXPECT_EQ(cluster.fleet().view(*r.prompt_instance)->tag, InstanceTag::kPrompt);
  const double us = static_cast<double>(sim.now().us());
  const auto usage = cluster.usage();
  EXPECT_DOUBLE_EQ(usage.gpu_us, (2 * 4 + 3 * 8) * us);
  EXPECT_DOUBLE_EQ(usage.instance_us, 5 * us);
  EXPECT_NEAR(usage.cost_usd, (1 * 2.0 + 3 * 8.0) * us / 3.6e9, 1e-12);
  EXPECT_TRUE(cluster.check_invariants().empty());
}

TEST(LlmClusterTest, ScalingAPoolOnItsOwnGpusAddsServersOfItsSku) {
  auto config = base_config({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 1}});
  SkuSpec small = config.sku;
  small.name = "small-gpu";
  config.pool_hardware.push_back({InstanceTag::kPrompt, small, 4, std::make_shared<testing::SimplePerf>(), "simple"});
  ListSource source({{0.0, 100, 2}, {5.0, 100, 2}});
  ScalingConfig scaling;
  const auto result = testing::run_scaled(
      config, source, {}, scaling,
      {{SimTime::from_seconds(1), testing::ScalingAction::Kind::kUp, InstanceTag::kPrompt},
       {SimTime::from_seconds(1), testing::ScalingAction::Kind::kUp, InstanceTag::kToken},
       {SimTime::from_seconds(2), testing::ScalingAction::Kind::kMigrate, InstanceTag::kPrompt}});
  EXPECT_EQ(result.counts.completed, 2u);
  EXPECT_EQ(result.scaling.scale_ups, 2u);
  EXPECT_EQ(result.scaling.migrations, 0u);  // the pools run on different GPUs
  EXPECT_EQ(result.scaling.blocked, 1u);
}

TEST(LlmClusterTest, SplitwiseFlowPrefillsOnPromptAndDecodesOnTokenInstances) {
  ListSource source({{0.0, 1000, 2}});
  auto config = base_config({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 1}});
  config.kv_transfer_gb_per_s = 1.0;  // 1000 tokens * 32,768 B per token -> 32.768 ms
  const auto result = run(config, source);
  const RequestRecord& r = result.records.at(0);
  EXPECT_EQ(*r.prompt_instance, 0u);            // prefilled on the prompt instance
  EXPECT_EQ(*r.instance, 1u);                   // decoded on the token instance
  EXPECT_EQ(*r.ttft(), SimTime::from_ms(20));   // TTFT excludes the transfer
  EXPECT_EQ(*r.e2e(), SimTime::from_ms(20) + SimTime::from_us(32'768) + SimTime::from_us(21'001));
}

TEST(LlmClusterTest, KvExhaustionMakesRequestsWaitAndNeverLosesThem) {
  std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows;
  for (int i = 0; i < 20; ++i) rows.emplace_back(0.0, 900, 100);
  rows.emplace_back(0.0, 5000, 100);  // can never fit
  ListSource source(rows);
  auto config = base_config({{InstanceTag::kMixed, 1}});
  config.kv_capacity_tokens = 3000;  // three requests of 1,000 tokens at a time
  const auto result = run(config, source);
  EXPECT_EQ(result.counts.arrived, 21u);
  EXPECT_EQ(result.counts.completed, 20u);
  EXPECT_EQ(result.counts.dropped, 1u);
  EXPECT_EQ(result.records.at(20).status, RequestStatus::kDropped);
  // The last admitted requests waited for earlier ones to free their KV.
  EXPECT_GT(*result.records.at(19).queueing(), SimTime::from_seconds(5));
}

TEST(LlmClusterTest, OnDemandKvEvictsAndRecomputesTheLatestSequencesAndLosesNone) {
  std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows;
  for (int i = 0; i < 20; ++i) rows.emplace_back(0.01 * i, 500, 400);
  ListSource source(rows);
  auto config = base_config({{InstanceTag::kMixed, 1}});
  config.kv_capacity_tokens = 4000;  // 20 sequences would need 18,000 tokens at their end
  config.kv_allocation = KvAllocation::kOnDemand;
  const auto result = run(config, source);
  EXPECT_EQ(result.counts.completed, 20u);
  std::uint32_t recomputed = 0;
  for (const auto& [id, r] : result.records) {
    EXPECT_EQ(r.status, RequestStatus::kCompleted);
    recomputed += r.kv_evictions;
  }
  EXPECT_GT(recomputed, 0u);
  // Admitted early, never evicted: the first request ran straight through.
  EXPECT_EQ(result.records.at(0).kv_evictions, 0u);
}

// Reserve mode: prompts prefilled one after another fill the KV with sequences that then
// wait for their output reservation, and nothing runs to free memory. The latest are
// evicted and recomputed, reserving everything; the run ends.
TEST(LlmClusterTest, ReserveModeBreaksAKvDeadlockByEvictingTheLatestAndEnds) {
  std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows;
  for (int i = 0; i < 20; ++i) rows.emplace_back(0.0, 100, 800);
  auto config = base_config({{InstanceTag::kMixed, 1}});
  config.kv_capacity_tokens = 1000;
  for (const std::uint32_t budget : {2048u, 1u}) {
    SCOPED_TRACE(budget);
    config.batching.max_batch_tokens = budget;
    ListSource source(rows);
    const auto result = run(config, source);
    EXPECT_EQ(result.counts.completed, 20u);
    EXPECT_EQ(result.counts.in_flight, 0u);
    std::uint32_t evictions = 0;
    for (const auto& [id, r] : result.records) evictions += r.kv_evictions;
    EXPECT_GT(evictions, 0u);
    // The oldest request is never the one evicted.
    EXPECT_EQ(result.records.at(0).kv_evictions, 0u);
  }
}

TEST(LlmClusterTest, APromptOverTheTokenBudgetRunsAloneAndPausesDecoding) {
  ListSource source({{0.0, 100, 50}, {0.1, 3000, 2}});
  auto config = base_config({{InstanceTag::kMixed, 1}});
  config.batching.max_batch_tokens = 2048;
  const auto result = run(config, source);
  // The big prompt ran in an iteration of its own: the running decode was left out once.
  EXPECT_EQ(result.records.at(0).pauses, 1u);
  EXPECT_EQ(*result.records.at(1).ttft() - *result.records.at(1).queueing(), SimTime::from_ms(40));
}

// A workload on which each policy routes differently (the review found the old test's
// workload gave every policy the same answer): after a request that finished, a long
// prompt, a long output and two short requests arrive together on two instances.
// round_robin ignores load; fewest_requests counts requests; fewest_pending_tokens sees
// the long prompt still waiting; least_kv_memory sees the long output's reservation.
TEST(LlmClusterTest, EachRoutingPolicyMakesItsOwnChoices) {
  const std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows = {
      {0.0, 10, 1}, {1.0, 3000, 10}, {1.0, 10, 5000}, {1.0, 10, 10}, {1.0, 10, 10}};
  const std::pair<RoutePolicy, std::vector<std::uint32_t>> expected[] = {
      {RoutePolicy::kRoundRobin, {0, 1, 0, 1, 0}},
      {RoutePolicy::kFewestRequests, {0, 0, 1, 0, 1}},
      {RoutePolicy::kFewestPendingTokens, {0, 0, 1, 1, 1}},
      {RoutePolicy::kLeastKvMemory, {0, 0, 1, 0, 0}},
  };
  for (const auto& [policy, instances] : expected) {
    ListSource source(rows);
    auto config = base_config({{InstanceTag::kMixed, 2}});
    config.prompt_routing = policy;
    const auto result = run(config, source);
    std::vector<std::uint32_t> chosen;
    for (std::uint64_t id = 0; id < rows.size(); ++id) chosen.push_back(*result.records.at(id).prompt_instance);
    EXPECT_EQ(chosen, instances) << kRoutePolicyNames.name(policy);
  }
}

// prefix_affinity sends a request where its prefix is cached unless the queue there costs
// more than the prefill it saves: two 1,600-token system prompts X and Y settle on one
// instance each, their later requests follow them, and a request for X arriving while
// X's instance has a long prompt waiting goes to the other instance.
TEST(LlmClusterTest, PrefixAffinityFollowsTheCachedPrefixUntilTheQueueCostsMore) {
  const std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows = {
      {0.0, 1610, 5}, {0.0, 1610, 5},    // X, Y: cold, X on 0, Y on 1 (0 has X pending)
      {10.0, 1610, 5}, {10.0, 1610, 5},  // Y, X: both hit
      {20.0, 8000, 5}, {20.0, 1610, 5},  // a long own prompt on 0 (X's), then X: to 1
  };
  const traces::ContentSegment x{101, 1600}, y{202, 1600};
  const std::vector<std::vector<traces::ContentSegment>> prefixes = {{x}, {y}, {y}, {x}, {}, {x}};
  for (const auto policy : {RoutePolicy::kPrefixAffinity, RoutePolicy::kFewestPendingTokens}) {
    ListSource source(rows, prefixes);
    auto config = base_config({{InstanceTag::kMixed, 2}});
    config.scheduler = BatchScheduler::kVllm;
    config.kv_capacity_tokens = 40'000;
    config.prompt_routing = policy;
    const auto result = run(config, source);
    std::vector<std::uint32_t> chosen;
    for (std::uint64_t id = 0; id < rows.size(); ++id) chosen.push_back(*result.records.at(id).prompt_instance);
    if (policy == RoutePolicy::kPrefixAffinity) {
      EXPECT_EQ(chosen, (std::vector<std::uint32_t>{0, 1, 1, 0, 0, 1}));
    } else {
      // Load alone sends the second round the other way: both miss.
      EXPECT_EQ(chosen, (std::vector<std::uint32_t>{0, 1, 0, 1, 0, 1}));
    }
  }
}

// The token pool follows its own policy: with fewest_requests a decode goes where fewer
// requests decode, with least_kv_memory where less KV is promised.
TEST(LlmClusterTest, TokenInstancesAreChosenByTheTokenPolicy) {
  // Two long decodes land on token instances 1 and 2; then a third request: by requests
  // the tie goes to the lower index, by KV to the instance holding the smaller one.
  const std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> rows = {
      {0.0, 10, 5000}, {0.001, 10, 50}, {0.5, 10, 10}};
  for (const auto& [policy, third] : {std::pair{RoutePolicy::kFewestRequests, 1u}, {RoutePolicy::kLeastKvMemory, 2u}}) {
    ListSource source(rows);
    auto config = base_config({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 2}});
    config.token_routing = policy;
    const auto result = run(config, source);
    EXPECT_EQ(*result.records.at(0).instance, 1u);
    EXPECT_EQ(*result.records.at(1).instance, 2u);
    EXPECT_EQ(*result.records.at(2).instance, third) << kRoutePolicyNames.name(policy);
  }
}

}  // namespace
}  // namespace meshsim::cluster

namespace meshsim::cluster {
namespace {

// A burst beyond serving.max_requests_in_system is shed at arrival and counted: random
// bursts and caps, under both engines; the requests admitted never overlap more than the
// cap (memory bounded by it), an arrival is shed only when the system held the cap, and
// every request ends completed or dropped with its reason.
TEST(LlmClusterPropertyTest, ABurstBeyondTheSystemsCapIsShedAndCounted) {
  const int cases = testing::case_count(60);
  for (int c = 0; c < cases; ++c) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(c) + 1);
    const std::uint64_t cap = std::vector<std::uint64_t>{1, 3, 20, 200}[rng() % 4];
    std::vector<ListSource::Row> rows;
    const int n = 50 + static_cast<int>(rng() % 400);
    const double window = std::vector<double>{0.0, 0.001, 0.5, 5.0}[rng() % 4];
    for (int i = 0; i < n; ++i) {
      rows.push_back({std::uniform_real_distribution<double>(0, window)(rng), 1 + static_cast<std::uint32_t>(rng() % 800),
                      1 + static_cast<std::uint32_t>(rng() % 40)});
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    auto config = base_config({{InstanceTag::kMixed, 1 + static_cast<std::uint32_t>(rng() % 3)}});
    if (rng() % 2 == 0) config.scheduler = BatchScheduler::kVllm;
    config.max_requests_in_system = cap;
    ListSource source(rows);
    const auto result = run(config, source);
    ASSERT_EQ(result.counts.arrived, static_cast<std::uint64_t>(n)) << "case " << c;
    ASSERT_EQ(result.counts.completed + result.counts.dropped, result.counts.arrived) << "case " << c;
    // Admitted requests as [arrival, finished) intervals; shed arrivals' times.
    std::vector<std::pair<SimTime, int>> edges;
    std::vector<SimTime> shed;
    for (const auto& r : result.in_order) {
      if (r.dropped_for == metrics::DropReason::kQueueFull) {
        shed.push_back(r.arrival);
        continue;
      }
      ASSERT_EQ(r.status, RequestStatus::kCompleted) << "case " << c;
      edges.emplace_back(r.arrival, +1);
      edges.emplace_back(*r.finished, -1);
    }
    std::sort(edges.begin(), edges.end());  // at equal times, leaving (-1) first
    std::int64_t inside = 0, most = 0;
    for (const auto& [t, step] : edges) most = std::max(most, inside += step);
    EXPECT_LE(most, static_cast<std::int64_t>(cap)) << "case " << c;
    for (const SimTime t : shed) {
      // At its arrival the system held the cap: admitted requests with arrival <= t < end
      // (or ending at t, when the arrival was handled first).
      std::uint64_t held = 0;
      for (const auto& r : result.in_order) {
        if (r.dropped_for != metrics::DropReason::kQueueFull && r.arrival <= t && *r.finished >= t) ++held;
      }
      EXPECT_GE(held, cap) << "case " << c << " at " << t.seconds();
    }
  }
}

}  // namespace
}  // namespace meshsim::cluster
