#pragma once

// The options of LLM serving that a scenario sets and the cluster runs by, defined once:
// configs fills them (configs/serving_config.hpp) and LlmCluster reads them, with no
// copy by hand in between. Plain values only: this header pulls in no simulation class.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"
#include "sim/perf/hardware.hpp"

namespace meshsim::cluster {

// What an instance does: prefill only, decode only, or both in place.
enum class InstanceTag { kPrompt, kToken, kMixed };
inline constexpr EnumNames kInstanceTagNames{std::array{std::pair{InstanceTag::kPrompt, std::string_view("prompt")},
                                                        std::pair{InstanceTag::kToken, std::string_view("token")},
                                                        std::pair{InstanceTag::kMixed, std::string_view("mixed")}}};

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

// The options the scenario's "serving" object sets beyond the deployment's hardware and
// start state (configs/README.md names their keys): the engine's (EngineOptions: which
// rules form batches, their limits) and the cluster's own.
struct ServingOptions : EngineOptions {
  // A request whose prompt and output together exceed this is refused at arrival and
  // counted (DropReason::kOverContext), never served, as vLLM refuses it. Under the vLLM
  // scheduler it defaults to the model's context (configs fill it in).
  std::optional<std::uint32_t> max_model_len;
  // A request not finished this long after it arrived is aborted, as when a client gives
  // up and vLLM drops its request (DropReason::kTimedOut); under kVllm only. Aborts
  // happen at the instance's next step boundary.
  std::optional<engine::SimTime> request_timeout;
  // Requests in the system (waiting or running, cluster-wide) at most this many: an
  // arrival beyond it is refused and counted (DropReason::kQueueFull), so a burst no
  // deployment could serve (a rate scale of 1e6) is shed, never held whole. Each request
  // in the system takes a few hundred bytes: the default bounds them near 0.5 GB.
  std::uint64_t max_requests_in_system = 1'000'000;
  RoutePolicy prompt_routing = RoutePolicy::kFewestPendingTokens;
  RoutePolicy token_routing = RoutePolicy::kFewestRequests;
  // KV capacity per instance: tp * HBM - weights - reserve, unless given (then the same
  // on every pool's hardware).
  double kv_reserve_fraction = 0.0;  // of the instance's HBM
  std::optional<std::uint64_t> kv_capacity_tokens;
  // Prompt -> token instance KV transfer bandwidth, GB/s (default: the SKU's network).
  std::optional<double> kv_transfer_gb_per_s;
  // Fold consecutive decode iterations of an unchanged batch into one event.
  bool fold_decode = true;
  // The priority of each class of service (TraceRequest::service_class), lower first;
  // empty: every request's is 0. The vllm engine's priority policy acts on it.
  std::vector<std::int32_t> class_priorities;
};

// The KV tokens an instance of `model` on `tensor_parallel` GPUs of `sku` can use: the
// options' capacity when given, else what HBM leaves after the reserve and the weights,
// in whole tokens (and whole blocks under vLLM). 0: not one token fits. One home for the
// cluster (serving_hardware.cpp) and for configs' checks.
std::uint64_t instance_kv_tokens(const ServingOptions& options, const ModelSpec& model, const SkuSpec& sku,
                                 std::uint32_t tensor_parallel);

}  // namespace meshsim::cluster
