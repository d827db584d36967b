#include "sim/cluster/instance_placement.hpp"

#include <string>

namespace meshsim::cluster {

Status ElasticServers::room_for_one_more(InstanceTag tag, const ServerPool& servers) const {
  if (max_servers_ && !servers.with_room(tag) && servers.count() >= *max_servers_) {
    return Error{"Max servers reached (" + std::to_string(*max_servers_) + ")"};
  }
  return Ok{};
}

Expected<PlacedInstance> ElasticServers::place(std::uint32_t /*instance*/, InstanceTag tag, ServerPool& servers) {
  if (const auto server = servers.with_room(tag)) return PlacedInstance{*server, {}};
  return PlacedInstance{servers.add(tag), {}};
}

bool ElasticServers::release(std::uint32_t /*instance*/, std::uint32_t server, ServerPool& servers) {
  if (servers.load(server) != 0) return false;
  servers.remove(server);
  return true;
}

}  // namespace meshsim::cluster
