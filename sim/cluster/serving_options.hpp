#pragma once

// The options of LLM serving that a scenario sets and the cluster runs by, defined once:
// configs fills them (configs/serving_config.hpp) and LlmCluster reads them, with no
// copy by hand in between. Plain values only: this header pulls in no simulation class.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

// What an instance does: prefill only, decode only, or both in place.
enum class InstanceTag { kPrompt, kToken, kMixed };
inline constexpr EnumNames kInstanceTagNames{std::array{std::pair{InstanceTag::kPrompt, std::string_view("prompt")},
                                                        std::pair{InstanceTag::kToken, std::string_view("token")},
                                                        std::pair{InstanceTag::kMixed, std::string_view("mixed")}}};

// How KV-cache memory is handed out.
enum class KvAllocation {
  kReserve,   // a request reserves its whole KV (prompt + output) before it decodes, and
              // waits for it (SplitwiseSim); when every sequence holding KV on an idle
              // instance waits so, the latest are evicted and recomputed (see
              // LlmCluster::break_kv_deadlock)
  kOnDemand,  // one token at a time as it is produced; when memory runs out the most
              // recently arrived decoding sequence is evicted and recomputed (vLLM)
};
inline constexpr EnumNames kKvAllocationNames{
    std::array{std::pair{KvAllocation::kReserve, std::string_view("reserve")},
               std::pair{KvAllocation::kOnDemand, std::string_view("on_demand")}}};

// Iteration-level (continuous) batching limits, SplitwiseSim's defaults.
struct BatchingConfig {
  std::uint32_t max_batch_size = 512;
  std::uint32_t max_batch_tokens = 2048;  // prompt tokens + 1 per decoding sequence
  // A decoding sequence paused (left out of a batch) this many times goes before new
  // prompts. SplitwiseSim's name, kept for its configs; the count is RequestRecord::pauses.
  std::uint32_t max_preemptions = 4;
};

// Which rules form an instance's batches.
enum class BatchScheduler {
  kSplitwise,  // SplitwiseSim's (BatchingConfig, KvAllocation): its scenarios and table
  kVllm,       // vLLM v1's: chunked prefill, KV blocks, prefix caching (VllmScheduler)
};
inline constexpr EnumNames kBatchSchedulerNames{
    std::array{std::pair{BatchScheduler::kSplitwise, std::string_view("splitwise")},
               std::pair{BatchScheduler::kVllm, std::string_view("vllm")}}};

struct InstanceGroup {
  InstanceTag tag = InstanceTag::kMixed;
  std::uint32_t count = 1;
};

// How a pool picks the instance for the next request.
enum class RoutePolicy {
  kRoundRobin,
  kFewestRequests,       // requests assigned and not finished (SplitwiseSim's JSQ)
  kFewestPendingTokens,  // prompt tokens not yet prefilled + 1 per request decoding (token_jsq)
  kLeastKvMemory,        // KV-cache tokens held or promised to the requests routed there
  // Prompt pools under vLLM with prefix caching: the least prefill work, counting the
  // instance's pending tokens plus this request's prompt tokens not cached there (so a
  // cached prefix draws a request until the queue it would join costs more than the
  // prefill it saves). LlmCluster::route_prompt looks at every member: O(members x blocks
  // hit) per request.
  kPrefixAffinity,
};
inline constexpr EnumNames kRoutePolicyNames{
    std::array{std::pair{RoutePolicy::kRoundRobin, std::string_view("round_robin")},
               std::pair{RoutePolicy::kFewestRequests, std::string_view("fewest_requests")},
               std::pair{RoutePolicy::kFewestPendingTokens, std::string_view("fewest_pending_tokens")},
               std::pair{RoutePolicy::kLeastKvMemory, std::string_view("least_kv_memory")},
               std::pair{RoutePolicy::kPrefixAffinity, std::string_view("prefix_affinity")}}};

// vLLM's scheduler limits (its engine arguments of the same names).
struct VllmLimits {
  std::uint32_t max_num_seqs = 128;            // requests running at once
  std::uint32_t max_num_batched_tokens = 2048;  // tokens computed per step (the token budget)
  // A prefill chunk takes at most this many tokens of a step (0: no limit; vLLM's default
  // with one partial prefill at a time).
  std::uint32_t long_prefill_token_threshold = 0;
  std::uint32_t block_size = 16;  // tokens per KV block
  bool prefix_caching = true;
};

// The options the scenario's "serving" object sets beyond the deployment's hardware and
// start state (configs/README.md names their keys).
struct ServingOptions {
  BatchScheduler scheduler = BatchScheduler::kSplitwise;
  BatchingConfig batching;  // kSplitwise
  VllmLimits vllm;          // kVllm (KV is then allocated in blocks, on demand)
  // A request whose prompt and output together exceed this is rejected at arrival and
  // counted (RequestRecord::rejected), never served, as vLLM refuses it.
  std::optional<std::uint32_t> max_model_len;
  // A request not finished this long after it arrived is aborted, as when a client gives
  // up and vLLM drops its request (RequestRecord::timed_out); under kVllm only. Aborts
  // happen at the instance's next step boundary.
  std::optional<engine::SimTime> request_timeout;
  RoutePolicy prompt_routing = RoutePolicy::kFewestPendingTokens;
  RoutePolicy token_routing = RoutePolicy::kFewestRequests;
  // KV capacity per instance: tp * HBM - weights - reserve, unless given (then the same
  // on every pool's hardware).
  double kv_reserve_fraction = 0.0;  // of the instance's HBM
  std::optional<std::uint64_t> kv_capacity_tokens;
  KvAllocation kv_allocation = KvAllocation::kReserve;
  // Prompt -> token instance KV transfer bandwidth, GB/s (default: the SKU's network).
  std::optional<double> kv_transfer_gb_per_s;
  // Fold consecutive decode iterations of an unchanged batch into one event.
  bool fold_decode = true;
};

}  // namespace meshsim::cluster
