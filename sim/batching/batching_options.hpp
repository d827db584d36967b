#pragma once

// The options of batch formation on one instance (the engines in this folder run by
// them; cluster::ServingOptions holds them for a scenario). Plain values only.

#include <array>
#include <compare>
#include <cstdint>
#include <string_view>
#include <utility>

#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

// Which rules form an instance's batches.
enum class BatchScheduler {
  kSplitwise,  // SplitwiseSim's (BatchingConfig, KvAllocation): its scenarios and table
  kVllm,       // vLLM v1's: chunked prefill, KV blocks, prefix caching (VllmScheduler)
};
inline constexpr EnumNames kBatchSchedulerNames{
    std::array{std::pair{BatchScheduler::kSplitwise, std::string_view("splitwise")},
               std::pair{BatchScheduler::kVllm, std::string_view("vllm")}}};

// Iteration-level (continuous) batching limits, SplitwiseSim's defaults.
struct BatchingConfig {
  std::uint32_t max_batch_size = 512;
  std::uint32_t max_batch_tokens = 2048;  // prompt tokens + 1 per decoding sequence
  // A decoding sequence paused (left out of a batch) this many times goes before new
  // prompts. SplitwiseSim's name, kept for its configs; the count is RequestRecord::pauses.
  std::uint32_t max_preemptions = 4;
};

// How KV-cache memory is handed out.
enum class KvAllocation {
  kReserve,   // a request reserves its whole KV (prompt + output) before it decodes, and
              // waits for it (SplitwiseSim); when every sequence holding KV on an idle
              // instance waits so, the latest are evicted and recomputed (see
              // SplitwiseEngine::break_kv_deadlock)
  kOnDemand,  // one token at a time as it is produced; when memory runs out the most
              // recently arrived decoding sequence is evicted and recomputed (vLLM)
};
inline constexpr EnumNames kKvAllocationNames{
    std::array{std::pair{KvAllocation::kReserve, std::string_view("reserve")},
               std::pair{KvAllocation::kOnDemand, std::string_view("on_demand")}}};

// vLLM's --scheduling-policy: the waiting queue's order and who is preempted for blocks.
enum class VllmPolicy {
  kFcfs,      // waiting in arrival order (a preempted request first); victim: the last admitted
  kPriority,  // waiting by (priority, arrival), lower first; victim: the running request
              // of the highest (priority, arrival), the least urgent
};
inline constexpr EnumNames kVllmPolicyNames{
    std::array{std::pair{VllmPolicy::kFcfs, std::string_view("fcfs")},
               std::pair{VllmPolicy::kPriority, std::string_view("priority")}}};

// How a host-memory KV store chooses what to evict.
enum class HostEviction {
  kLru,  // the least recently stored or touched block
  kArc,  // adaptive replacement: blocks seen once (T1) against blocks seen again (T2),
         // their balance learned from ghost lists of what each recently evicted
};
inline constexpr EnumNames kHostEvictionNames{std::array{
    std::pair{HostEviction::kLru, std::string_view("lru")}, std::pair{HostEviction::kArc, std::string_view("arc")}}};

// A host-memory tier of KV blocks per instance, as vLLM's native CPU offloading keeps it
// (its OffloadingConnector with the CPU backend; HostKvTier).
struct HostKvOptions {
  // Its room: tokens, or GiB of host memory (at the model's KV bytes per token); 0 and 0:
  // no host tier.
  std::uint64_t capacity_tokens = 0;
  double capacity_gib = 0.0;
  std::uint32_t block_tokens = 16;  // an offloaded block: a multiple of the GPU block
  HostEviction eviction = HostEviction::kLru;
  // A load's time: latency plus its bytes over the host link, each GPU copying its share
  // over its own link of link_gb_per_s (0: copies take no time).
  double link_gb_per_s = 20.0;
  engine::SimTime load_latency;
  // For one instance (for_instance): its KV bytes per token and its link's bytes per second.
  double bytes_per_token = 0.0;
  double link_bytes_per_s = 0.0;

  bool enabled() const { return capacity_tokens > 0 || capacity_gib > 0; }
  // These options on an instance of `tensor_parallel` GPUs holding `kv_bytes_per_token`.
  HostKvOptions for_instance(double kv_bytes_per_token, std::uint32_t tensor_parallel) const {
    HostKvOptions out = *this;
    out.bytes_per_token = kv_bytes_per_token;
    out.link_bytes_per_s = link_gb_per_s * 1e9 * tensor_parallel;
    if (capacity_tokens == 0 && capacity_gib > 0) {
      out.capacity_tokens = static_cast<std::uint64_t>(capacity_gib * 1024.0 * 1024.0 * 1024.0 / kv_bytes_per_token);
    }
    return out;
  }
};

// What a host tier did, summed (an engine reports them as they happen; the cluster keeps
// them per instance).
struct HostKvCounts {
  std::uint64_t hit_tokens = 0;      // prompt tokens loaded from the host tier, not computed
  std::uint64_t loads = 0;           // requests that waited for a load
  std::uint64_t loaded_bytes = 0, stored_bytes = 0;
  engine::SimTime load_time, store_time;  // the host link busy loading and storing
  std::uint64_t loads_deferred = 0;  // lookups put off: too many loads, or their blocks being loaded
  HostKvCounts& operator+=(const HostKvCounts& o) {
    hit_tokens += o.hit_tokens;
    loads += o.loads;
    loaded_bytes += o.loaded_bytes;
    stored_bytes += o.stored_bytes;
    load_time += o.load_time;
    store_time += o.store_time;
    loads_deferred += o.loads_deferred;
    return *this;
  }
};

// vLLM's scheduler limits (its engine arguments of the same names).
struct VllmLimits {
  std::uint32_t max_num_seqs = 128;            // requests running at once
  std::uint32_t max_num_batched_tokens = 2048;  // tokens computed per step (the token budget)
  // A prefill chunk takes at most this many tokens of a step (0: no limit; vLLM's default
  // with one partial prefill at a time).
  std::uint32_t long_prefill_token_threshold = 0;
  std::uint32_t block_size = 16;  // tokens per KV block
  bool prefix_caching = true;
  VllmPolicy policy = VllmPolicy::kFcfs;  // vLLM's scheduling_policy
  HostKvOptions host_kv;                  // vLLM's CPU offloading (off by default)
};

// Where a request stands in a priority queue: vLLM orders by priority (lower first), then
// arrival; equal ranks keep the order they were enqueued in.
struct VllmRank {
  std::int32_t priority = 0;
  std::uint64_t arrival = 0;
  auto operator<=>(const VllmRank&) const = default;
};

// What chooses and configures an instance's engine (cluster::ServingOptions holds it).
struct EngineOptions {
  BatchScheduler scheduler = BatchScheduler::kSplitwise;
  BatchingConfig batching;  // kSplitwise
  KvAllocation kv_allocation = KvAllocation::kReserve;
  VllmLimits vllm;  // kVllm (KV is then allocated in blocks, on demand)
};

// What the chosen engine can do, for the cluster and for configs' checks alike (defined
// beside make_engine, the one place that maps a scheduler to an engine).
// The KV tokens an instance with room for `tokens` can use (vLLM: whole blocks).
std::uint64_t usable_kv_tokens(const EngineOptions& options, std::uint64_t tokens);
// Whether the engine reads the requests' tokens (Sequences::stream) and caches prefixes.
bool reads_tokens(const EngineOptions& options);
bool caches_prefixes(const EngineOptions& options);
// Whether requests can be aborted mid-way (request timeouts).
bool supports_aborts(const EngineOptions& options);

}  // namespace meshsim::cluster
