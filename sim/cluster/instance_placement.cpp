#include "sim/cluster/instance_placement.hpp"

#include <string>

namespace meshsim::cluster {

Status ElasticServers::room_for_one_more(InstanceTag tag) const {
  if (max_servers_ && !servers_.with_room(tag) && servers_.count() >= *max_servers_) {
    return Error{"Max servers reached (" + std::to_string(*max_servers_) + ")"};
  }
  return Ok{};
}

Expected<PlacedInstance> ElasticServers::place(std::uint32_t /*instance*/, InstanceTag tag) {
  if (const auto server = servers_.with_room(tag)) return PlacedInstance{*server, {}};
  return PlacedInstance{servers_.add(tag), {}};
}

bool ElasticServers::release(std::uint32_t /*instance*/, std::uint32_t server) {
  if (servers_.load(server) != 0) return false;
  servers_.remove(server);
  return true;
}

}  // namespace meshsim::cluster
