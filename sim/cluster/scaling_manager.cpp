#include "sim/cluster/scaling_manager.hpp"

#include "sim/cluster/llm_cluster.hpp"

#include <cstdio>
#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

ScalingManager::ScalingManager(engine::Simulation& sim, LlmCluster& cluster, ScalingConfig config,
                               InstancePlacement* placement)
    : sim_(sim),
      cluster_(cluster),
      config_(config),
      elastic_(placement == nullptr ? std::make_unique<ElasticServers>(config.max_servers) : nullptr),
      placement_(placement == nullptr ? elastic_.get() : placement),
      drain_check_(sim, *this, engine::EventPayload{kDrainCheck, 0}) {
  MESHSIM_CHECK(config_.drain_check_interval > SimTime::zero(), "drain_check_interval must be positive");
  MESHSIM_CHECK(config_.scale_up_delay >= SimTime::zero(), "scale_up_delay must not be negative");
  MESHSIM_CHECK(config_.min_instances_per_pool >= 1, "min_instances_per_pool must be at least 1");
  cluster_.fleet().track_active_loads();
  cluster_.fleet().set_drained_listener([this](std::uint32_t instance) { drained_.insert(instance); });
}

ScalingManager::~ScalingManager() { cluster_.fleet().set_drained_listener(nullptr); }

std::string ScalingManager::at_now() const {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", sim_.now().seconds());
  return text;
}

// Callers check log_ first, so no line is built when nobody listens.
void ScalingManager::log(const std::string& line) const { log_(line); }

Error ScalingManager::blocked(std::string why) {
  ++counts_.blocked;
  if (log_) log("[Action Blocked] " + why);
  return Error{std::move(why)};
}

Expected<PlacedInstance> ScalingManager::take_server(std::uint32_t instance, InstanceTag tag) {
  auto placed = placement_->place(instance, tag, cluster_.fleet().servers());
  if (!placed) return blocked(placed.error().message);
  return placed;
}

void ScalingManager::arm_activation(std::uint32_t instance, InstanceTag tag, SimTime wait_for_room) {
  const SimTime after = wait_for_room + config_.scale_up_delay;
  starting_[static_cast<std::size_t>(tag)].emplace(instance, sim_.now() + after);
  ++counts_.scale_ups;
  if (log_ && wait_for_room > SimTime::zero()) {
    char wait[32];
    std::snprintf(wait, sizeof wait, "%.2f", wait_for_room.seconds());
    log("[ScalingManager] Instance " + std::to_string(instance) + " waits " + wait +
        " s for the agents it preempted to stop");
  }
  sim_.schedule_after(after, *this, engine::EventPayload{kActivate, instance});
}

Status ScalingManager::room_for_one_more(InstanceTag tag) {
  if (cluster_.fleet().counts().attached >= config_.max_total_instances) {
    return blocked("Max cluster size reached (" + std::to_string(config_.max_total_instances) + ")");
  }
  if (auto room = placement_->room_for_one_more(tag, cluster_.fleet().servers()); !room) {
    return blocked(room.error().message);
  }
  return Ok{};
}

Expected<ScalingManager::ScaleUp> ScalingManager::scale_up_full(InstanceTag tag) {
  if (auto room = room_for_one_more(tag); !room) return room.error();
  if (tag == InstanceTag::kPrompt && view().count(InstanceTag::kToken, InstanceState::kActive) == 0) {
    return blocked("Cannot add prompt, the cluster has no ACTIVE token instance to ship KV to");
  }
  const std::uint32_t instance = cluster_.fleet().size();
  const auto placed = take_server(instance, tag);
  if (!placed) return placed.error();
  ScaleUp added;
  added.server = placed->server;
  added.instance = cluster_.fleet().add(tag, added.server);
  if (log_) log("[ScalingManager] Full scale-up: server " + std::to_string(added.server) + " + instance " +
      std::to_string(added.instance));
  arm_activation(added.instance, tag, placed->wait_for_room);
  return added;
}

Status ScalingManager::begin_drain(std::uint32_t instance, AfterDrain after, InstanceTag retag_to) {
  if (cluster_.fleet().state_of(instance) != InstanceState::kActive) {
    return blocked("Cannot drain instance " + std::to_string(instance) + ", it is not ACTIVE");
  }
  const InstanceTag tag = cluster_.fleet().tag_of(instance);
  if (view().count(tag, InstanceState::kActive) <= config_.min_instances_per_pool) {
    return blocked("Cannot remove " + std::string(kInstanceTagNames.name(tag)) + ", min limit reached");
  }
  if (auto drained = cluster_.fleet().drain(instance); !drained) return blocked(drained.error().message);
  Draining& d = draining_[instance];
  d.since = sim_.now();
  d.after = after;
  d.retag_to = retag_to;
  d.serial = ++drain_serials_;
  if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " draining started at " + at_now());
  if (config_.drain_timeout) {
    sim_.schedule_after(*config_.drain_timeout, *this,
                        engine::EventPayload{kEvacuate, (std::uint64_t{d.serial} << 32) | instance});
  }
  if (!drain_check_.armed()) drain_check_.arm_after(config_.drain_check_interval);
  return Ok{};
}

Status ScalingManager::scale_down_full(std::uint32_t instance) {
  auto status = begin_drain(instance, AfterDrain::kRemove);
  if (status) ++counts_.scale_downs;
  return status;
}

Status ScalingManager::deactivate(std::uint32_t instance) {
  auto status = begin_drain(instance, AfterDrain::kDeactivate);
  if (status) ++counts_.scale_downs;
  return status;
}

Status ScalingManager::migrate(std::uint32_t instance, InstanceTag to) {
  if (cluster_.fleet().state_of(instance) == InstanceState::kActive) {
    const InstanceTag from = cluster_.fleet().tag_of(instance);
    const auto refuse = [&](const char* why) {
      return blocked("Cannot migrate " + std::string(kInstanceTagNames.name(from)) + " instance " +
                     std::to_string(instance) + " to " + std::string(kInstanceTagNames.name(to)) + ", " + why);
    };
    if (from == InstanceTag::kMixed || to == InstanceTag::kMixed || from == to) {
      return refuse("only between prompt and token");
    }
    if (!cluster_.fleet().hardware().same(from, to)) return refuse("the pools run on different hardware");
  }
  auto status = begin_drain(instance, AfterDrain::kRetag, to);
  if (status) {
    ++counts_.migrations;
    if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " migrating to " +
                  std::string(kInstanceTagNames.name(to)));
  }
  return status;
}

Status ScalingManager::migrate_pool(InstanceTag from, InstanceTag to) {
  const auto chosen = view().least_loaded(from);
  if (!chosen) {
    return blocked("Cannot migrate " + std::string(kInstanceTagNames.name(from)) + ", no ACTIVE instance");
  }
  return migrate(*chosen, to);
}

Status ScalingManager::cancel_scale_up(std::uint32_t instance) {
  if (cluster_.fleet().state_of(instance) != InstanceState::kStarting) {
    return blocked("Cannot cancel instance " + std::to_string(instance) + ", it is not STARTING");
  }
  starting_[static_cast<std::size_t>(cluster_.fleet().tag_of(instance))].erase(instance);
  const std::uint32_t server = *cluster_.fleet().remove(instance);
  ++counts_.scale_downs;
  ++counts_.instances_removed;
  if (log_) {
    log("[ScalingManager] Instance " + std::to_string(instance) + " cancelled while starting at " + at_now());
  }
  release(instance, server);
  return Ok{};
}

Status ScalingManager::reactivate(std::uint32_t instance) {
  if (cluster_.fleet().state_of(instance) != InstanceState::kInactive) {
    return blocked("Cannot reactivate instance " + std::to_string(instance) + ", it is not INACTIVE");
  }
  if (auto room = room_for_one_more(cluster_.fleet().tag_of(instance)); !room) return room;
  const auto placed = take_server(instance, cluster_.fleet().tag_of(instance));
  if (!placed) return placed.error();
  cluster_.fleet().restart(instance, placed->server);
  if (log_) {
    log("[ScalingManager] Instance " + std::to_string(instance) + " restarting on server " +
        std::to_string(placed->server) + " at " + at_now());
  }
  arm_activation(instance, cluster_.fleet().tag_of(instance), placed->wait_for_room);
  return Ok{};
}

Status ScalingManager::scale_down(InstanceTag tag) {
  const auto chosen = view().least_loaded(tag);
  if (!chosen) return blocked("Cannot remove " + std::string(kInstanceTagNames.name(tag)) + ", no ACTIVE instance");
  return scale_down_full(*chosen);
}

void ScalingManager::on_event(const engine::EventPayload& payload) {
  switch (payload.a) {
    case kActivate: {
      const auto instance = static_cast<std::uint32_t>(payload.b);
      if (cluster_.fleet().state_of(instance) != InstanceState::kStarting) return;
      starting_[static_cast<std::size_t>(cluster_.fleet().tag_of(instance))].erase(instance);
      cluster_.fleet().activate(instance);
      if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " scaled up at " + at_now());
      return;
    }
    case kDrainCheck: check_draining(); return;
    case kEvacuate: {
      const auto instance = static_cast<std::uint32_t>(payload.b);
      const auto it = draining_.find(instance);
      if (it == draining_.end() || it->second.serial != static_cast<std::uint32_t>(payload.b >> 32)) return;
      const auto view = cluster_.fleet().view(instance);
      if (!view || view->state != InstanceState::kDraining || view->evacuating) return;
      ++counts_.evacuations;
      if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " drain timeout at " + at_now() + ": " +
          std::to_string(view->requests) + " requests move to ACTIVE instances");
      cluster_.evacuate(instance);
      return;
    }
    default: MESHSIM_CHECK(false, "ScalingManager: unknown event");
  }
}

void ScalingManager::release(std::uint32_t instance, std::uint32_t server) {
  if (!placement_->release(instance, server, cluster_.fleet().servers())) return;
  ++counts_.servers_removed;
  if (log_) log("[ScalingManager] Auto scale-down server " + std::to_string(server) + " after instance removal");
}

void ScalingManager::check_draining() {
  std::vector<std::uint32_t> done;
  for (const std::uint32_t instance : std::exchange(drained_, {})) {
    if (draining_.contains(instance) && cluster_.fleet().drained(instance)) done.push_back(instance);
  }
  for (const std::uint32_t instance : done) {
    const Draining d = draining_.at(instance);
    draining_.erase(instance);
    if (d.after == AfterDrain::kRetag) {
      cluster_.fleet().retag(instance, d.retag_to);
      if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " active as " +
                    std::string(kInstanceTagNames.name(d.retag_to)) + " at " + at_now());
      continue;
    }
    const std::uint32_t server = cluster_.fleet().deactivate(instance);
    if (d.after == AfterDrain::kRemove) {
      cluster_.fleet().remove(instance);
      ++counts_.instances_removed;
      if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " removed at " + at_now());
    } else {
      if (log_) log("[ScalingManager] Instance " + std::to_string(instance) + " inactive at " + at_now());
    }
    release(instance, server);
  }
  if (!draining_.empty()) drain_check_.arm_after(config_.drain_check_interval);
}

}  // namespace meshsim::cluster
