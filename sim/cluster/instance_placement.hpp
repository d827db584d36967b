#pragma once

#include <cstdint>

#include "sim/cluster/server_pool.hpp"
#include "sim/engine/expected.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

// Where a serving instance's GPUs come from, for the ScalingManager. Two homes exist:
// seed 004's elastic cluster (ElasticServers: a server with room, else a new server,
// removed once idle) and the shared cluster (sim/shared/shared_cluster), which claims
// GPUs on fixed nodes through the scheduling core, preempting batch work for them. The
// cluster's servers are handed to each call by their owner (the ScalingManager, or the
// LlmCluster for a start state placed this way), so a placement reaches nothing else of
// the serving side.
struct PlacedInstance {
  std::uint32_t server = 0;
  // How long the instance waits for its room before it starts loading: the agents of the
  // work preempted for it stopping (a hung one is killed at the policy's cancel_timeout).
  SimTime wait_for_room;
};

class InstancePlacement {
 public:
  virtual ~InstancePlacement() = default;
  // A limit of the placement that refuses one more instance of `tag` before anything
  // else is checked (Ok when there is none); the message says which.
  virtual Status room_for_one_more(InstanceTag /*tag*/, const ServerPool& /*servers*/) const { return Ok{}; }
  // Where `instance` (about to start, of `tag`) goes, or why there is nowhere: a server
  // of `servers`, which it may add.
  virtual Expected<PlacedInstance> place(std::uint32_t instance, InstanceTag tag, ServerPool& servers) = 0;
  // `instance` left `server` (drained to INACTIVE, or a scale-up taken back); true when
  // the server went with it (it had no other instance: the placement removed it).
  virtual bool release(std::uint32_t instance, std::uint32_t server, ServerPool& servers) = 0;
};

// Seed 004's elastic cluster: a server with room for the instance, else a new one (up to
// max_servers when set); a server goes once its last instance has.
class ElasticServers final : public InstancePlacement {
 public:
  explicit ElasticServers(std::optional<std::uint32_t> max_servers) : max_servers_(max_servers) {}

  Status room_for_one_more(InstanceTag tag, const ServerPool& servers) const override;
  Expected<PlacedInstance> place(std::uint32_t instance, InstanceTag tag, ServerPool& servers) override;
  bool release(std::uint32_t instance, std::uint32_t server, ServerPool& servers) override;

 private:
  std::optional<std::uint32_t> max_servers_;
};

}  // namespace meshsim::cluster
