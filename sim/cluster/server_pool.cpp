#include "sim/cluster/server_pool.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

std::uint32_t ServerPool::count() const {
  std::uint32_t alive = 0;
  for (const std::uint32_t n : alive_by_kind_) alive += n;
  return alive;
}

std::uint32_t ServerPool::add(InstanceTag tag) {
  const auto id = static_cast<std::uint32_t>(load_.size());
  const std::uint32_t kind = hardware_.index_of(tag);
  load_.push_back(0);
  kind_.push_back(kind);
  with_room_[kind].insert(id);
  ++alive_by_kind_[kind];
  changed_();
  return id;
}

std::uint32_t ServerPool::load(std::uint32_t server) const {
  MESHSIM_CHECK(exists(server), "no server " + std::to_string(server));
  return load_[server];
}

std::optional<std::uint32_t> ServerPool::with_room(InstanceTag tag) const {
  const auto& servers = with_room_[hardware_.index_of(tag)];
  if (servers.empty()) return std::nullopt;
  return *servers.begin();
}

void ServerPool::remove(std::uint32_t server) {
  MESHSIM_CHECK(load(server) == 0, "server " + std::to_string(server) + " still holds instances");
  load_[server] = kRemoved;
  with_room_[kind_[server]].erase(server);
  --alive_by_kind_[kind_[server]];
  changed_();
}

void ServerPool::hold(std::uint32_t server, InstanceTag tag) {
  const std::uint32_t kind = hardware_.index_of(tag);
  MESHSIM_CHECK(load(server) < room(server), "server " + std::to_string(server) + " has no room for another instance");
  MESHSIM_CHECK(kind_[server] == kind, "server " + std::to_string(server) + " is not of its " +
                                           std::string(kInstanceTagNames.name(tag)) + " instance's SKU " +
                                           hardware_.kind(kind).sku.name);
  if (++load_[server] == room(server)) with_room_[kind].erase(server);
}

void ServerPool::release(std::uint32_t server) {
  --load_[server];
  with_room_[kind_[server]].insert(server);
}

double ServerPool::cost_per_hour() const {
  // From whole counts (a running sum of prices would drift).
  double per_hour = 0;
  for (std::uint32_t kind = 0; kind < alive_by_kind_.size(); ++kind) {
    per_hour += alive_by_kind_[kind] * hardware_.kind(kind).sku.cost_per_hour;
  }
  return per_hour;
}

std::vector<std::string> ServerPool::check_invariants(const std::vector<std::uint32_t>& held) const {
  std::vector<std::string> problems;
  for (std::uint32_t server = 0; server < load_.size(); ++server) {
    if (load_[server] == kRemoved) continue;
    const bool listed = with_room_[kind_[server]].contains(server);
    if ((load_[server] < room(server)) != listed) {
      problems.push_back("server " + std::to_string(server) + ": listed as having room exactly when it has");
    }
    const std::uint32_t found = server < held.size() ? held[server] : 0;
    if (load_[server] != found) {
      problems.push_back("server " + std::to_string(server) + ": counts " + std::to_string(load_[server]) +
                         " instances, holds " + std::to_string(found));
    }
  }
  return problems;
}

}  // namespace meshsim::cluster
