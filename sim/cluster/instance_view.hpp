#pragma once

#include <cstdint>
#include <optional>

#include "sim/cluster/pool_ledger.hpp"
#include "sim/cluster/serving_options.hpp"

namespace meshsim::cluster {

// An instance as the scaling side sees it.
struct InstanceView {
  std::uint32_t id = 0;
  InstanceTag tag = InstanceTag::kMixed;
  InstanceState state = InstanceState::kActive;
  std::optional<std::uint32_t> server;  // none when INACTIVE
  std::int64_t requests = 0;        // assigned and not finished (includes KV transfers in flight)
  std::uint32_t running = 0;        // in the batch running now
  std::int64_t pending_tokens = 0;  // prompt tokens not yet prefilled + 1 per request decoding
  std::uint64_t kv_used = 0;        // KV tokens held now
  bool evacuating = false;
};

}  // namespace meshsim::cluster
