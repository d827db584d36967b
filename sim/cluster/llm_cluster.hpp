#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/hardware.hpp"
#include "sim/cluster/load_index.hpp"
#include "sim/cluster/perf_model.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/engine/enum_names.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/timer.hpp"

namespace meshsim::cluster {

// What an instance does: prefill only, decode only, or both in place.
enum class InstanceTag { kPrompt, kToken, kMixed };
inline constexpr EnumNames kInstanceTagNames{std::array{std::pair{InstanceTag::kPrompt, std::string_view("prompt")},
                                                        std::pair{InstanceTag::kToken, std::string_view("token")},
                                                        std::pair{InstanceTag::kMixed, std::string_view("mixed")}}};

// How a pool picks the instance for the next request.
enum class RoutePolicy {
  kRoundRobin,
  kFewestRequests,       // requests assigned and not finished (SplitwiseSim's JSQ)
  kFewestPendingTokens,  // prompt tokens not yet prefilled + 1 per request decoding (token_jsq)
  kLeastKvMemory,        // KV-cache tokens held or promised to the requests routed there
};
inline constexpr EnumNames kRoutePolicyNames{
    std::array{std::pair{RoutePolicy::kRoundRobin, std::string_view("round_robin")},
               std::pair{RoutePolicy::kFewestRequests, std::string_view("fewest_requests")},
               std::pair{RoutePolicy::kFewestPendingTokens, std::string_view("fewest_pending_tokens")},
               std::pair{RoutePolicy::kLeastKvMemory, std::string_view("least_kv_memory")}}};

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

struct InstanceGroup {
  InstanceTag tag = InstanceTag::kMixed;
  std::uint32_t count = 1;
};

struct LlmClusterConfig {
  ModelSpec model;
  SkuSpec sku;
  std::uint32_t tensor_parallel = 8;
  std::shared_ptr<const PerfModel> perf;
  std::vector<InstanceGroup> start_state;  // instances packed onto servers of the SKU
  BatchingConfig batching;
  RoutePolicy prompt_routing = RoutePolicy::kFewestPendingTokens;
  RoutePolicy token_routing = RoutePolicy::kFewestRequests;
  // KV capacity per instance: tp * HBM - weights - reserve, unless given.
  double kv_reserve_fraction = 0.0;  // of the instance's HBM
  std::optional<std::uint64_t> kv_capacity_tokens;
  KvAllocation kv_allocation = KvAllocation::kReserve;
  // Prompt -> token instance KV transfer bandwidth, GB/s (default: the SKU's network).
  std::optional<double> kv_transfer_gb_per_s;
  // Fold consecutive decode iterations of an unchanged batch into one event.
  bool fold_decode = true;
};

// LLM serving on simulated GPU instances: prefill and decode in continuous batches priced
// by a PerfModel, KV-cache capacity per instance, the Splitwise flow (prefill on a prompt
// instance, KV transfer, decode on a token instance) or both phases on a mixed instance,
// and routing by a LoadIndex per pool.
//
// Guarantees (tests/sim/llm_cluster_property_test.cpp checks them on random
// configurations): every request completes or is dropped, whatever the capacities and
// budgets (no KV deadlock in either allocation mode); results do not depend on
// fold_decode; work per request does not grow with queue lengths or output lengths.
class LlmCluster final : public ServingSystem, private engine::EventHandler {
 public:
  LlmCluster(engine::Simulation& sim, LlmClusterConfig config, RequestSink& sink);
  ~LlmCluster() override;

  void submit(const traces::TraceRequest& request) override;
  std::uint64_t queued() const override { return in_system_ - running_; }
  std::uint64_t running() const override { return running_; }
  std::uint32_t instances() const override { return static_cast<std::uint32_t>(instances_.size()); }
  InstanceCounts instance_counts() const override;
  std::uint64_t kv_used_tokens() const override;
  std::uint64_t kv_total_tokens() const override { return kv_capacity_tokens_ * instances_.size(); }
  double busy_unit_us() override;
  double capacity_units() const override { return static_cast<double>(instances_.size()); }
  double gpus() const override { return static_cast<double>(instances_.size()) * config_.tensor_parallel; }
  double cost_per_hour() const override { return servers_ * config_.sku.cost_per_hour; }
  void for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const override;
  void set_activity_sink(ActivitySink* sink) override;
  std::string describe_waiting() const override;

  std::uint64_t kv_capacity_tokens() const { return kv_capacity_tokens_; }
  std::uint32_t servers() const { return servers_; }
  // Events handled so far by this cluster (iteration ends and KV transfers): shows folding.
  std::uint64_t events_handled() const { return events_handled_; }

  // A folded run of decode iterations is timed in segments of at most this many
  // iterations, so cutting it short (new work arrived) costs O(this), not O(output).
  static constexpr std::uint32_t kFoldSegment = 256;
  // The longest iteration a performance model may price (about 11.6 days); longer is an
  // error in its figures (RangeError), not a time to simulate.
  static constexpr double kMaxIterationMs = 1e9;

 private:
  struct Instance;
  struct Live;
  enum EventKind : std::uint64_t { kIterationEnd, kTransferDone };

  // llm_cluster.cpp: requests, routing, the Splitwise flow, accounting.
  void on_event(const engine::EventPayload& payload) override;
  std::uint32_t route(RoutePolicy policy, LoadIndex& index, std::uint32_t& round_robin,
                      const std::vector<std::uint32_t>& members);
  void refresh_load(std::uint32_t instance);
  std::int64_t load_of(const Instance& in, RoutePolicy policy) const;
  void wake(std::uint32_t instance);
  void prefill_done(std::uint32_t instance, std::uint32_t slot);
  void arrive_for_decode(std::uint32_t instance, std::uint32_t slot);
  void ready_to_decode(Instance& in, std::uint32_t slot);
  void finish(std::uint32_t slot, metrics::RequestStatus status);
  void set_busy(Instance& in, bool busy);
  std::string describe(std::uint32_t instance) const;

  // llm_batching.cpp: batch formation, KV admission and eviction, folded decode runs.
  void start_iteration(std::uint32_t instance);
  bool form_batch(Instance& in);
  bool steady_after_one_iteration(const Instance& in) const;
  std::uint32_t fold_length(const Instance& in) const;
  void begin_segment(Instance& in, std::uint32_t iterations);
  void end_iteration(std::uint32_t instance);
  void interrupt_fold(Instance& in);
  bool break_kv_deadlock(Instance& in);
  void evict_latest(Instance& in);
  void evict_for_recompute(Instance& in, std::uint32_t slot);
  std::uint64_t kv_in_segment(const Instance& in) const;
  std::uint64_t prompt_kv_need(const Live& r) const;
  std::uint64_t decode_kv_need(const Live& r) const;
  std::uint32_t prefill_tokens(const Live& r) const;
  SimTime iteration_time(const PrefillWork& prefill, const DecodeWork& decode) const;
  SimTime decode_iteration_time(std::uint32_t batch, std::uint64_t context) const;
  static std::int64_t kv_need(const Live& r, InstanceTag tag);

  engine::Simulation& sim_;
  LlmClusterConfig config_;
  RequestSink& sink_;
  std::uint64_t kv_capacity_tokens_ = 0;
  std::uint32_t servers_ = 0;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::vector<std::uint32_t> prompt_pool_;  // prompt and mixed instances
  std::vector<std::uint32_t> token_pool_;   // token instances
  LoadIndex prompt_index_;
  LoadIndex token_index_;
  std::uint32_t prompt_round_robin_ = 0;
  std::uint32_t token_round_robin_ = 0;
  std::vector<Live> live_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> scratch_;  // reused by batch formation and iteration ends
  std::uint64_t in_system_ = 0;
  std::uint64_t running_ = 0;
  std::uint64_t busy_instances_ = 0;
  double busy_us_ = 0.0;
  SimTime busy_accounted_until_;
  std::uint64_t events_handled_ = 0;
  ActivitySink* activity_ = nullptr;
};

}  // namespace meshsim::cluster
