#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::metrics {

using engine::SimTime;

enum class RequestStatus { kCompleted, kDropped, kInFlight };
std::string_view to_string(RequestStatus status);

// Why a request was dropped (kNone unless it was).
enum class DropReason {
  kNone,
  kOverContext,     // at arrival: prompt + output longer than the context (max_model_len), as vLLM refuses it
  kOverKvCapacity,  // at arrival: its KV cache could never fit on an instance
  kTimedOut,        // not finished within the client's timeout (aborted)
  kQueueFull,       // the system was full (serving.max_requests_in_system; the fixed-latency model's queue)
};
inline constexpr EnumNames kDropReasonNames{
    std::array{std::pair{DropReason::kNone, std::string_view("")},
               std::pair{DropReason::kOverContext, std::string_view("over_context")},
               std::pair{DropReason::kOverKvCapacity, std::string_view("over_kv_capacity")},
               std::pair{DropReason::kTimedOut, std::string_view("timed_out")},
               std::pair{DropReason::kQueueFull, std::string_view("queue_full")}}};

// How a request's mean time between tokens is taken: over its output - 1 gaps (meshsim),
// or as (E2E - TTFT) / output tokens (SplitwiseSim), which is slightly lower.
enum class TbtDefinition { kMeanGap, kSplitwiseSim };
inline constexpr EnumNames kTbtDefinitionNames{
    std::array{std::pair{TbtDefinition::kMeanGap, std::string_view("mean_gap")},
               std::pair{TbtDefinition::kSplitwiseSim, std::string_view("splitwise")}}};

// Everything measured about one request; a row of requests.csv.
struct RequestRecord {
  std::uint64_t id = 0;
  SimTime arrival;
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;
  RequestStatus status = RequestStatus::kInFlight;
  std::optional<std::uint32_t> prompt_instance;  // where it was (or waits to be) prefilled
  std::optional<std::uint32_t> instance;         // where it decodes (the same on a mixed instance)
  std::optional<SimTime> started;         // service first began (end of queueing)
  std::optional<SimTime> first_token;
  std::optional<SimTime> finished;        // last token
  SimTime tbt_max;                        // longest gap between two output tokens
  std::uint32_t pauses = 0;        // times a decoding sequence was left out of a batch (KV kept)
  std::uint32_t kv_evictions = 0;  // times its KV was evicted and later recomputed
  std::uint32_t migrations = 0;    // times it moved off an evacuated instance (its KV, if any, recomputed)
  DropReason dropped_for = DropReason::kNone;
  std::uint8_t service_class = 0;  // its class of service (index into the scenario's classes)

  bool operator==(const RequestRecord&) const = default;

  std::optional<SimTime> queueing() const {
    return started ? std::optional<SimTime>(*started - arrival) : std::nullopt;
  }
  std::optional<SimTime> ttft() const {
    return first_token ? std::optional<SimTime>(*first_token - arrival) : std::nullopt;
  }
  std::optional<SimTime> e2e() const {
    return finished ? std::optional<SimTime>(*finished - arrival) : std::nullopt;
  }
  // Of a completed request; 0 for a single output token under kMeanGap.
  std::optional<SimTime> tbt_mean(TbtDefinition definition) const {
    if (!finished || !first_token) return std::nullopt;
    const std::int64_t divisor =
        definition == TbtDefinition::kMeanGap ? std::int64_t{output_tokens} - 1 : std::int64_t{output_tokens};
    return divisor > 0 ? SimTime::from_us((*finished - *first_token).us() / divisor) : SimTime::zero();
  }
};

// A request refused for its length is the workload's, not the deployment's doing (vLLM
// answers it with an error at once): SLO attainment judges the others.
inline bool slo_judges(const RequestRecord& record) { return record.dropped_for != DropReason::kOverContext; }

}  // namespace meshsim::metrics
