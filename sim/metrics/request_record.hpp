#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/engine/sim_time.hpp"

namespace meshsim::metrics {

using engine::SimTime;

enum class RequestStatus { kCompleted, kDropped, kInFlight };
std::string_view to_string(RequestStatus status);

// Everything measured about one request; a row of requests.csv.
struct RequestRecord {
  std::uint64_t id = 0;
  SimTime arrival;
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;
  RequestStatus status = RequestStatus::kInFlight;
  std::optional<std::uint32_t> instance;  // where it was served (or queued)
  std::optional<SimTime> started;         // service first began (end of queueing)
  std::optional<SimTime> first_token;
  std::optional<SimTime> finished;        // last token
  SimTime tbt_mean;                       // mean gap between output tokens (0 for 1 token)
  SimTime tbt_max;
  std::uint32_t preemptions = 0;

  std::optional<SimTime> queueing() const {
    return started ? std::optional<SimTime>(*started - arrival) : std::nullopt;
  }
  std::optional<SimTime> ttft() const {
    return first_token ? std::optional<SimTime>(*first_token - arrival) : std::nullopt;
  }
  std::optional<SimTime> e2e() const {
    return finished ? std::optional<SimTime>(*finished - arrival) : std::nullopt;
  }
};

}  // namespace meshsim::metrics
