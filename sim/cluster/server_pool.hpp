#pragma once

// The servers a serving cluster's instances run on: each of one kind of the cluster's
// hardware, holding up to that kind's instances per server. The placements add and remove
// servers (an elastic cluster grows them on demand; a shared cluster maps nodes it claims
// through the scheduling core); the cluster puts instances on them and pays for them.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster/serving_hardware.hpp"

namespace meshsim::cluster {

class ServerPool {
 public:
  // `changed` runs after every server added or removed (the cluster's cost level follows).
  ServerPool(const ServingHardware& hardware, std::function<void()> changed)
      : hardware_(hardware),
        with_room_(hardware.kinds()),
        alive_by_kind_(hardware.kinds(), 0),
        changed_(std::move(changed)) {}

  // Servers not removed.
  std::uint32_t count() const;
  // A new, empty server of the hardware `tag`'s pool runs on. Ids are never reused.
  std::uint32_t add(InstanceTag tag);
  // The server must exist and hold no instance.
  void remove(std::uint32_t server);
  bool exists(std::uint32_t server) const { return server < load_.size() && load_[server] != kRemoved; }
  // Instances on a server that exists.
  std::uint32_t load(std::uint32_t server) const;
  // Instances a server holds at most (its SKU's GPUs per node / the TP degree).
  std::uint32_t room(std::uint32_t server) const { return hardware_.kind(kind_.at(server)).per_server; }
  // The lowest-numbered server with room for one more instance of `tag`'s pool, if any.
  std::optional<std::uint32_t> with_room(InstanceTag tag) const;

  // One more instance of `tag`'s pool on `server`, which must have room and be of that
  // pool's hardware.
  void hold(std::uint32_t server, InstanceTag tag);
  // One instance fewer on `server`.
  void release(std::uint32_t server);
  // What the servers alive cost, USD per hour.
  double cost_per_hour() const;
  // Each server's recorded load against `held` (instances found on it, by server id);
  // empty when all agree.
  std::vector<std::string> check_invariants(const std::vector<std::uint32_t>& held) const;
  // Server ids given so far (removed ones included): the size of a table by server id.
  std::size_t ids() const { return load_.size(); }

 private:
  static constexpr std::uint32_t kRemoved = ~0u;

  const ServingHardware& hardware_;
  std::vector<std::uint32_t> load_;   // instances per server id; kRemoved when removed
  std::vector<std::uint32_t> kind_;   // hardware kind per server id
  std::vector<std::set<std::uint32_t>> with_room_;  // by hardware kind
  std::vector<std::uint32_t> alive_by_kind_;        // servers not removed, by hardware kind
  std::function<void()> changed_;
};

}  // namespace meshsim::cluster
