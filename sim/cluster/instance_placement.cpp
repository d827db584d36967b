#include "sim/cluster/instance_placement.hpp"

#include <string>

namespace meshsim::cluster {

Status ElasticServers::room_for_one_more(InstanceTag tag) const {
  if (max_servers_ && !cluster_.server_with_room(tag) && cluster_.servers() >= *max_servers_) {
    return Error{"Max servers reached (" + std::to_string(*max_servers_) + ")"};
  }
  return Ok{};
}

Expected<PlacedInstance> ElasticServers::place(std::uint32_t /*instance*/, InstanceTag tag) {
  if (const auto server = cluster_.server_with_room(tag)) return PlacedInstance{*server, {}};
  return PlacedInstance{cluster_.add_server(tag), {}};
}

bool ElasticServers::release(std::uint32_t /*instance*/, std::uint32_t server) {
  if (cluster_.server_instances(server) != 0) return false;
  cluster_.remove_server(server);
  return true;
}

}  // namespace meshsim::cluster
