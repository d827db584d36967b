#pragma once

// Random serving cases (a deployment and a workload) for differential and property
// tests of LlmCluster, drawn from any source of choices: an Rng in the unit tests, the
// fuzzer's bytes in tests/fuzz/serving_fold_fuzz.cpp. Cases aim at the corners: tiny KV
// capacities and token budgets, batches of one, prompts over the budget, outputs long
// enough to fold many times, bursts, and coarse iteration times so that arrivals,
// transfers and iteration ends often fall on the same microsecond.

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/sim/llm_test_support.hpp"

namespace meshsim::cluster::testing {

struct ServingCase {
  LlmClusterConfig config;
  std::vector<std::tuple<double, std::uint32_t, std::uint32_t>> requests;  // arrival s, prompt, output
  std::vector<std::vector<traces::ContentSegment>> prefixes;              // by request (vLLM cases)
  SimTime timeseries_interval = SimTime::from_seconds(1);
  std::string description;
  // Scaling actions taken while it runs (draw_scaling adds them).
  ScalingConfig scaling;
  std::vector<ScalingAction> actions;
};

// `Choose` has `std::uint64_t pick(std::uint64_t bound)`, a value in [0, bound).
template <typename Choose>
ServingCase draw_serving_case(Choose& choose, std::uint32_t max_requests = 200) {
  const auto one_of = [&](std::initializer_list<std::uint64_t> values) {
    return *(values.begin() + choose.pick(values.size()));
  };
  const auto between = [&](std::uint64_t low, std::uint64_t high) { return low + choose.pick(high - low + 1); };

  ServingCase c;
  std::vector<InstanceGroup> groups;
  const auto layout = choose.pick(3);
  if (layout != 1) groups.push_back({InstanceTag::kMixed, static_cast<std::uint32_t>(between(1, 4))});
  if (layout != 0) {
    groups.push_back({InstanceTag::kPrompt, static_cast<std::uint32_t>(between(1, 3))});
    groups.push_back({InstanceTag::kToken, static_cast<std::uint32_t>(between(1, 3))});
  }
  c.config = base_config(groups);
  c.config.kv_allocation = choose.pick(2) == 0 ? KvAllocation::kReserve : KvAllocation::kOnDemand;
  constexpr RoutePolicy kPolicies[] = {RoutePolicy::kRoundRobin, RoutePolicy::kFewestRequests,
                                       RoutePolicy::kFewestPendingTokens, RoutePolicy::kLeastKvMemory};
  c.config.prompt_routing = kPolicies[choose.pick(4)];
  c.config.token_routing = kPolicies[choose.pick(4)];
  c.config.kv_capacity_tokens = one_of({64, 300, 1000, 2500, 8000, 40000});
  c.config.batching.max_batch_size = static_cast<std::uint32_t>(one_of({1, 2, 3, 8, 64, 512}));
  c.config.batching.max_batch_tokens = static_cast<std::uint32_t>(one_of({1, 16, 256, 1024, 2048}));
  c.config.batching.max_preemptions = static_cast<std::uint32_t>(between(0, 5));
  c.config.kv_transfer_gb_per_s = static_cast<double>(one_of({1, 50, 1000}));
  // Half the cases under vLLM's scheduler: tiny blocks and budgets, thresholds, caching on
  // and off, a context limit that rejects some requests.
  const bool vllm = choose.pick(2) == 0;
  if (vllm) {
    c.config.scheduler = BatchScheduler::kVllm;
    VllmLimits& v = c.config.vllm;
    v.block_size = static_cast<std::uint32_t>(one_of({1, 4, 16, 64}));
    v.max_num_seqs = static_cast<std::uint32_t>(one_of({1, 2, 3, 8, 64, 128}));
    v.max_num_batched_tokens = std::max(v.max_num_seqs, static_cast<std::uint32_t>(one_of({1, 16, 256, 2048})));
    v.long_prefill_token_threshold = static_cast<std::uint32_t>(one_of({0, 0, 7, 512}));
    v.prefix_caching = choose.pick(4) != 0;
    if (v.prefix_caching && choose.pick(3) == 0) c.config.prompt_routing = RoutePolicy::kPrefixAffinity;
    if (choose.pick(4) == 0) c.config.max_model_len = static_cast<std::uint32_t>(one_of({50, 700, 3000}));
    if (choose.pick(3) == 0) c.config.request_timeout = SimTime::from_ms(static_cast<std::int64_t>(one_of({7, 300, 5000})));
    c.config.kv_capacity_tokens = std::max<std::uint64_t>(*c.config.kv_capacity_tokens, 64);
    // Half of them with a host KV tier: blocks of 16 to 256 tokens (each store touches a
    // request's every block, as vLLM's does: tiny blocks make long requests quadratic),
    // room for one block to many, free to slow copies.
    if (choose.pick(2) == 0) {
      HostKvOptions& h = v.host_kv;
      h.block_tokens = std::max<std::uint32_t>(16, v.block_size) * static_cast<std::uint32_t>(one_of({1, 4}));
      h.capacity_tokens = std::uint64_t{h.block_tokens} * static_cast<std::uint64_t>(one_of({1, 8, 100, 10'000}));
      h.eviction = choose.pick(2) == 0 ? HostEviction::kLru : HostEviction::kArc;
      h.link_gb_per_s = static_cast<double>(one_of({0, 1, 50}));
      h.load_latency = SimTime::from_ms(static_cast<std::int64_t>(one_of({0, 0, 3})));
    }
  }
  // Whole-millisecond pieces: iteration lengths repeat, and coincide with arrivals.
  c.config.perf = std::make_shared<SimplePerf>(static_cast<double>(one_of({1, 10})),
                                               static_cast<double>(one_of({100, 1000, 1'000'000})),
                                               static_cast<double>(one_of({1, 5, 20})),
                                               static_cast<double>(one_of({1000, 1'000'000'000})),
                                               RequestCosts{static_cast<double>(one_of({0, 0, 3})),
                                                            static_cast<double>(one_of({0, 0, 2}))});
  // A third of the split deployments run their prompt pool on other GPUs (SplitwiseSim's
  // HA): servers of another SKU holding 1, 2 or 4 instances, iterations priced apart.
  if (layout != 0 && choose.pick(3) == 0) {
    SkuSpec other = c.config.sku;
    other.name = "toy-gpu-b";
    other.gpus_per_node = 4;
    other.cost_per_hour = 3.0;
    c.config.pool_hardware.push_back(
        {InstanceTag::kPrompt, other, static_cast<std::uint32_t>(one_of({1, 2, 4})),
         std::make_shared<SimplePerf>(static_cast<double>(one_of({2, 30})), static_cast<double>(one_of({50, 1000}))),
         "simple"});
  }
  c.timeseries_interval = SimTime::from_ms(static_cast<std::int64_t>(one_of({7, 50, 1000})));

  const auto count = static_cast<std::uint32_t>(between(1, max_requests));
  const auto workload = choose.pick(4);
  const std::uint32_t long_output = static_cast<std::uint32_t>(one_of({50, 600, 3000}));
  double t = 0.0;
  for (std::uint32_t i = 0; i < count; ++i) {
    // 0: one burst; 1: a few bursts; 2: Poisson-like gaps in whole ms; 3: long and short mixed.
    if (workload == 1 && choose.pick(8) == 0) t += static_cast<double>(between(1, 2000)) / 1000.0;
    if (workload >= 2) t += static_cast<double>(choose.pick(workload == 2 ? 200 : 2000)) / 1000.0;
    std::uint32_t prompt = static_cast<std::uint32_t>(one_of({1, 7, 100, 600, 3000}) + choose.pick(50));
    std::uint32_t output = static_cast<std::uint32_t>(1 + choose.pick(workload == 3 && i % 7 == 0 ? long_output : 60));
    c.requests.emplace_back(t, prompt, output);
    if (vllm) {
      // Shared system prompts (ids 1-3, of two lengths) before some prompts.
      std::vector<traces::ContentSegment> prefix;
      const auto shared = choose.pick(4);
      if (shared > 0) prefix.push_back({shared, std::min<std::uint32_t>(prompt, shared == 3 ? 700 : 40)});
      c.prefixes.push_back(std::move(prefix));
    }
  }
  std::ostringstream d;
  d << "layout " << layout << " (";
  for (const auto& g : groups) d << kInstanceTagNames.name(g.tag) << "x" << g.count << ' ';
  d << "), ";
  if (vllm) {
    const VllmLimits& v = c.config.vllm;
    d << "vllm: block " << v.block_size << ", seqs " << v.max_num_seqs << ", tokens " << v.max_num_batched_tokens
      << ", threshold " << v.long_prefill_token_threshold << ", caching " << v.prefix_caching << ", max_model_len "
      << c.config.max_model_len.value_or(0) << ", timeout "
      << (c.config.request_timeout ? c.config.request_timeout->ms() : 0.0) << " ms, ";
    if (v.host_kv.enabled()) {
      d << "host tier " << v.host_kv.capacity_tokens << " tokens in blocks of " << v.host_kv.block_tokens << ' '
        << kHostEvictionNames.name(v.host_kv.eviction) << ", link " << v.host_kv.link_gb_per_s << " GB/s + "
        << v.host_kv.load_latency.ms() << " ms, ";
    }
  }
  for (const auto& pool : c.config.pool_hardware) {
    d << kInstanceTagNames.name(pool.tag) << " on " << pool.sku.name << " TP " << pool.tensor_parallel << ", ";
  }
  d << "kv " << kKvAllocationNames.name(c.config.kv_allocation) << ' ' << *c.config.kv_capacity_tokens
    << ", routing " << kRoutePolicyNames.name(c.config.prompt_routing) << '/'
    << kRoutePolicyNames.name(c.config.token_routing) << ", batch " << c.config.batching.max_batch_size << " seqs "
    << c.config.batching.max_batch_tokens << " tokens, max_preemptions " << c.config.batching.max_preemptions
    << ", workload " << workload << " of " << count << " requests";
  c.description = d.str();
  return c;
}

// Adds random scaling to a case: scale-ups, scale-downs and migrations of its pools at random times
// over its arrivals and a little after, under a random ScalingConfig (delays from none to
// seconds, drain timeouts from at once to never, tight limits so some actions are blocked).
template <typename Choose>
void draw_scaling(Choose& choose, ServingCase& c) {
  const auto one_of = [&](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + choose.pick(values.size()));
  };
  ScalingConfig& s = c.scaling;
  s.scale_up_delay = SimTime::from_ms(one_of({0, 7, 500, 3000}));
  s.drain_check_interval = SimTime::from_ms(one_of({1, 50, 1000}));
  const std::int64_t timeout = one_of({-1, 0, 10, 300, 5000});
  s.drain_timeout = timeout < 0 ? std::nullopt : std::optional<SimTime>(SimTime::from_ms(timeout));
  s.min_instances_per_pool = static_cast<std::uint32_t>(1 + choose.pick(2));
  s.max_total_instances = static_cast<std::uint32_t>(2 + choose.pick(8));
  std::vector<InstanceTag> tags;
  for (const auto& g : c.config.start_state) tags.push_back(g.tag);
  const double horizon = std::get<0>(c.requests.back()) + 2.0;
  const auto actions = choose.pick(13);
  for (std::uint64_t i = 0; i < actions; ++i) {
    ScalingAction action;
    const auto ms = choose.pick(static_cast<std::uint64_t>(horizon * 1000));
    action.at = SimTime::from_ms(static_cast<std::int64_t>(ms));
    action.kind = static_cast<ScalingAction::Kind>(choose.pick(3));
    action.tag = tags[choose.pick(tags.size())];
    c.actions.push_back(action);
  }
  std::ostringstream d;
  d << ", scaling: " << actions << " actions, delay " << s.scale_up_delay.seconds() << " s, check "
    << s.drain_check_interval.seconds() << " s, timeout " << timeout << " ms, min " << s.min_instances_per_pool
    << ", max " << s.max_total_instances;
  c.description += d.str();
}

// Replays a case; `fold` sets fold_decode.
inline RunResult run_case(const ServingCase& c, bool fold) {
  LlmClusterConfig config = c.config;
  config.fold_decode = fold;
  ListSource source(c.requests, c.prefixes);
  replay::ReplayOptions options;
  options.timeseries_interval = c.timeseries_interval;
  if (c.actions.empty()) return run(config, source, options);
  return run_scaled(config, source, options, c.scaling, c.actions);
}

// Whether a folded and an unfolded run reported the same things in the same order (the
// same bytes of requests.csv and timeseries.csv).
inline bool same_outputs(const RunResult& a, const RunResult& b) { return a.in_order == b.in_order && a.rows == b.rows; }

}  // namespace meshsim::cluster::testing
