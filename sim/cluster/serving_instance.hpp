#pragma once

// One instance of a serving cluster: its place in the lifecycle and on a server, its
// engine (queues, batch formation, KV), its running step's timing and the loads routing
// reads. InstanceFleet keeps the table of them; LlmCluster moves requests through them.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "sim/batching/instance_engine.hpp"
#include "sim/cluster/pool_ledger.hpp"
#include "sim/cluster/serving_hardware.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/cluster/step_segment.hpp"
#include "sim/engine/timer.hpp"

namespace meshsim::cluster {

struct ServingInstance {
  static constexpr std::uint32_t kNoServer = ~0u;

  InstanceTag tag = InstanceTag::kMixed;
  InstanceState state = InstanceState::kStarting;
  bool removed = false;
  bool counted_state = false;  // in the pool totals' counts by state
  bool evacuating = false;  // DRAINING past its timeout: its requests move at the next boundary
  bool drain_reported = false;  // DRAINING and drained, and the drained listener told
  const InstanceHardware* hardware = nullptr;  // its pool's, in the fleet's ServingHardware
  std::uint32_t server = kNoServer;
  std::unique_ptr<engine::Timer> timer;  // ranked by instance index (see InstanceFleet::add)
  std::unique_ptr<InstanceEngine> engine;  // its queues, batch formation and KV
  ServingSystem::PrefixCacheCounts prefix;  // its steps' lookups, over every engine it had
  // Under a request timeout: (deadline, slot) of the requests that joined the engine here,
  // earliest first; entries of requests gone elsewhere or finished are skipped when they
  // surface. (A request joins when it is queued, not when it is routed: one routed here
  // while its KV cache is in transit must not lose its entry.)
  std::priority_queue<std::pair<engine::SimTime, std::uint32_t>,
                      std::vector<std::pair<engine::SimTime, std::uint32_t>>, std::greater<>>
      deadlines;
  bool busy = false;
  StepSegment segment;  // the running step's timing, while busy
  std::optional<engine::SimTime> host_wake;  // the earliest host-load event scheduled for it
  // Routing loads.
  std::int64_t requests = 0;
  std::int64_t pending_tokens = 0;
  std::int64_t kv_promised = 0;  // KV tokens the routed requests will need here
  ActiveLoad counted;            // what of requests and pending_tokens the pool ledger holds

  // Its load as `policy` routes by.
  std::int64_t load(RoutePolicy policy) const {
    switch (policy) {
      case RoutePolicy::kRoundRobin:
      case RoutePolicy::kFewestRequests: return requests;
      case RoutePolicy::kFewestPendingTokens:
      case RoutePolicy::kPrefixAffinity: return pending_tokens;
      case RoutePolicy::kLeastKvMemory: return kv_promised;
    }
    return 0;
  }
  // What a scale-down takes the least of: pending prompt tokens, or for a token instance
  // the KV memory held or promised to its requests.
  std::int64_t scale_down_load() const { return tag == InstanceTag::kToken ? kv_promised : pending_tokens; }
  // The KV tokens a request holds here at most: a prompt instance keeps the prompt and
  // the first token until the transfer, the others the whole sequence.
  std::int64_t kv_need(const Sequence& s) const {
    return tag == InstanceTag::kPrompt ? std::int64_t{s.prompt_tokens} + 1
                                       : std::int64_t{s.prompt_tokens} + s.output_tokens;
  }
  // KV tokens held at `now`: an unfolded run's use, counting what the running segment's
  // iterations begun by now take.
  std::uint64_t kv_held(engine::SimTime now) const { return engine->kv_used_tokens(busy ? segment.begun(now) : 0); }
  // DRAINING with nothing assigned and idle: ready to leave its state.
  bool drained() const { return state == InstanceState::kDraining && requests == 0 && !busy; }

  // No work, KV or load left here (a drained instance may leave its server).
  bool holds_nothing() const {
    return !engine->has_waiting() && engine->kv_used_tokens(0) == 0 && pending_tokens == 0 && kv_promised == 0;
  }
};

}  // namespace meshsim::cluster
