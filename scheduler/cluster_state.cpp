#include "scheduler/cluster_state.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {

std::uint32_t ClusterState::add_node(NodeSpec spec) {
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  // A second node of one name would take the first one's place in the index.
  MESHSIM_CHECK(node_index_.emplace(spec.name, index).second, "a second node named '" + spec.name + "'");
  ResourceLedger ledger(spec.capacity);
  nodes_.push_back(Node{std::move(spec), NodeState::kUp, std::move(ledger)});
  indexed_as_.emplace_back();
  reindex(index, false);
  place_pending();
  return index;
}

std::optional<std::uint32_t> ClusterState::find_node(const std::string& name) const {
  const auto it = node_index_.find(name);
  if (it == node_index_.end()) return std::nullopt;
  return it->second;
}

OpResult ClusterState::set_node_state(const std::string& name, NodeState state) {
  const auto index = find_node(name);
  if (!index) return OpResult::fail("no node named '" + name + "'");
  const bool was_up = nodes_[*index].state == NodeState::kUp;
  nodes_[*index].state = state;
  reindex(*index, was_up);
  if (state == NodeState::kUp) place_pending();
  return OpResult::ok();
}

std::vector<ResourceVector> ClusterState::free_resources() const {
  std::vector<ResourceVector> free;
  free.reserve(nodes_.size());
  for (const auto& node : nodes_) free.push_back(node.ledger.available());
  return free;
}

std::vector<bool> ClusterState::eligible_nodes() const {
  std::vector<bool> eligible;
  eligible.reserve(nodes_.size());
  for (const auto& node : nodes_) eligible.push_back(node.state == NodeState::kUp);
  return eligible;
}

bool ClusterState::can_place(const std::vector<ResourceVector>& bundles, PlacementStrategy strategy,
                             const std::vector<PgId>& freeing) const {
  if (freeing.empty()) return choose_nodes(bundles, strategy).has_value();
  if (bundles.size() == 1) {
    // One bundle fits iff some up node's free room plus what is freed there holds it:
    // only the nodes the freed PGs touch gain room, so the others need no copy.
    if (choose_nodes(bundles, strategy)) return true;
    std::map<std::uint32_t, ResourceVector> freed;
    for (const PgId id : freeing) {
      const PlacementGroup* pg = placement_group(id);
      if (pg == nullptr || pg->state != PgState::kReady) continue;
      for (std::size_t b = 0; b < pg->bundles.size(); ++b) freed[pg->nodes[b]] += pg->bundles[b];
    }
    return std::any_of(freed.begin(), freed.end(), [&](const auto& entry) {
      const Node& node = nodes_[entry.first];
      return node.state == NodeState::kUp && bundles.front().fits_in_sum(node.ledger.available(), entry.second);
    });
  }
  std::vector<ResourceVector> free = free_resources();
  for (const PgId id : freeing) {
    const PlacementGroup* pg = placement_group(id);
    if (pg == nullptr || pg->state != PgState::kReady) continue;
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) free[pg->nodes[b]] += pg->bundles[b];
  }
  return place_bundles(bundles, strategy, free, eligible_nodes()).has_value();
}

void ClusterState::reindex(std::uint32_t node, bool was_indexed) {
  // The node's entry is moved to its new key, not freed and allocated again: a
  // placement or release touches its nodes' entries on every call.
  decltype(free_index_)::node_type entry;
  if (was_indexed) entry = free_index_.extract(indexed_as_[node]);
  if (nodes_[node].state != NodeState::kUp) return;
  const ResourceVector& free = nodes_[node].ledger.available();
  indexed_as_[node] = FreeKey{free.gpu_milli(), free.cpu_milli(), free.memory_milli(), node};
  if (entry.empty()) {
    free_index_.insert(indexed_as_[node]);
  } else {
    entry.value() = indexed_as_[node];
    free_index_.insert(std::move(entry));
  }
}

void ClusterState::set_node_order(NodeOrder order, NodeScore score) {
  node_order_ = order;
  node_score_ = std::move(score);
}

std::optional<std::uint32_t> ClusterState::preferred_node(const ResourceVector& need) const {
  switch (node_order_) {
    case NodeOrder::kBestFit: {
      // The first fitting entry from the needed GPUs on is the lexicographic minimum.
      constexpr auto kLowest = std::numeric_limits<std::int64_t>::min();
      for (auto it = free_index_.lower_bound(FreeKey{need.gpu_milli(), kLowest, kLowest, 0}); it != free_index_.end();
           ++it) {
        if (need.fits_in(nodes_[std::get<3>(*it)].ledger.available())) return std::get<3>(*it);
      }
      return std::nullopt;
    }
    case NodeOrder::kWorstFit:
      // From the most free down; below the needed GPUs nothing fits.
      for (auto it = free_index_.rbegin(); it != free_index_.rend() && std::get<0>(*it) >= need.gpu_milli(); ++it) {
        if (need.fits_in(nodes_[std::get<3>(*it)].ledger.available())) return std::get<3>(*it);
      }
      return std::nullopt;
    case NodeOrder::kScore: {
      std::optional<std::uint32_t> best;
      double best_score = 0.0;
      for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].state != NodeState::kUp || !need.fits_in(nodes_[i].ledger.available())) continue;
        const double score = node_score_(need, nodes_[i]);
        if (!best || score > best_score) {
          best = i;
          best_score = score;
        }
      }
      return best;
    }
  }
  return std::nullopt;
}

std::optional<std::vector<std::uint32_t>> ClusterState::choose_nodes(const std::vector<ResourceVector>& bundles,
                                                                     PlacementStrategy strategy) const {
  const bool one_node_first = bundles.size() == 1 || strategy == PlacementStrategy::kPack ||
                              strategy == PlacementStrategy::kStrictPack;
  if (one_node_first && !bundles.empty()) {
    ResourceVector total;
    for (const auto& b : bundles) total += b;
    if (const auto node = preferred_node(total)) return std::vector<std::uint32_t>(bundles.size(), *node);
    if (bundles.size() == 1 || strategy == PlacementStrategy::kStrictPack) return std::nullopt;
  }
  return place_bundles(bundles, strategy, free_resources(), eligible_nodes());
}

bool ClusterState::try_place(PlacementGroup& pg) {
  auto assignment = choose_nodes(pg.bundles, pg.strategy);
  if (!assignment) return false;
  for (std::size_t b = 0; b < pg.bundles.size(); ++b) {
    const std::uint32_t node = (*assignment)[b];
    ResourceLedger& ledger = nodes_[node].ledger;
    // Cannot fail: the placement checked the free resources.
    (void)ledger.reserve(pg.bundles[b]);
    ledger.commit(pg.bundles[b]);
    reindex(node, true);
  }
  pg.nodes = std::move(*assignment);
  pg.state = PgState::kReady;
  return true;
}

ClusterState::PgResult ClusterState::create_placement_group(std::string name, std::vector<ResourceVector> bundles,
                                                            PlacementStrategy strategy, bool pend_if_unplaceable) {
  PgResult out;
  if (bundles.empty()) {
    out.result = OpResult::fail("placement group '" + name + "' has no bundles");
    return out;
  }
  for (const auto& bundle : bundles) {
    if (!bundle.is_non_negative() || bundle.is_zero()) {
      out.result = OpResult::fail("placement group '" + name + "': a bundle must be non-empty and non-negative, got " +
                                  bundle.to_string());
      return out;
    }
  }
  PlacementGroup pg{next_pg_, std::move(name), std::move(bundles), strategy, PgState::kPending, {}};
  const bool placed = try_place(pg);
  if (!placed && !pend_if_unplaceable) {
    out.result = OpResult::fail("placement group '" + pg.name + "' (" + std::string(kPlacementStrategyNames.name(strategy)) +
                                ", " + std::to_string(pg.bundles.size()) + " bundles) does not fit on the nodes");
    return out;
  }
  const PgId id = next_pg_++;
  if (!placed) pending_.push_back(id);
  out.id = id;
  out.ready = placed;
  pgs_.emplace(id, std::move(pg));
  return out;
}

OpResult ClusterState::remove_placement_group(PgId id) {
  const auto it = pgs_.find(id);
  if (it == pgs_.end()) return OpResult::fail("no placement group " + std::to_string(id));
  PlacementGroup& pg = it->second;
  if (pg.state == PgState::kReady) {
    for (std::size_t b = 0; b < pg.bundles.size(); ++b) {
      nodes_[pg.nodes[b]].ledger.release(pg.bundles[b]);
      reindex(pg.nodes[b], nodes_[pg.nodes[b]].state == NodeState::kUp);
    }
  } else {
    pending_.erase(std::remove(pending_.begin(), pending_.end(), id), pending_.end());
  }
  pgs_.erase(it);
  place_pending();
  return OpResult::ok();
}

void ClusterState::place_pending() {
  // First come, first placed; one that still does not fit does not block the rest.
  for (auto it = pending_.begin(); it != pending_.end();) {
    PlacementGroup& pg = pgs_.at(*it);
    if (try_place(pg)) {
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

const PlacementGroup* ClusterState::placement_group(PgId id) const {
  const auto it = pgs_.find(id);
  return it == pgs_.end() ? nullptr : &it->second;
}


ClusterState::State ClusterState::state() const {
  State out;
  for (const auto& node : nodes_) out.nodes.emplace_back(node.spec, node.state);
  out.placement_groups.insert(pgs_.begin(), pgs_.end());
  out.pending.assign(pending_.begin(), pending_.end());
  out.next_pg = next_pg_;
  return out;
}

OpResult ClusterState::restore(const State& state) {
  ClusterState next;
  next.node_order_ = node_order_;
  next.node_score_ = node_score_;
  for (const auto& [spec, node_state] : state.nodes) {
    const auto index = static_cast<std::uint32_t>(next.nodes_.size());
    if (!next.node_index_.emplace(spec.name, index).second) return OpResult::fail("a second node named '" + spec.name + "'");
    next.nodes_.push_back(Node{spec, node_state, ResourceLedger(spec.capacity)});
    next.indexed_as_.emplace_back();
  }
  for (const auto& [id, pg] : state.placement_groups) {
    if (pg.state == PgState::kReady) {
      if (pg.nodes.size() != pg.bundles.size()) return OpResult::fail("placement group " + std::to_string(id) + " lists the wrong number of nodes");
      for (std::size_t b = 0; b < pg.bundles.size(); ++b) {
        if (pg.nodes[b] >= next.nodes_.size()) return OpResult::fail("placement group " + std::to_string(id) + " names a node that does not exist");
        auto& ledger = next.nodes_[pg.nodes[b]].ledger;
        if (auto reserved = ledger.reserve(pg.bundles[b]); !reserved) {
          return OpResult::fail("placement group " + std::to_string(id) + " does not fit node " +
                                next.nodes_[pg.nodes[b]].spec.name);
        }
        ledger.commit(pg.bundles[b]);
      }
    }
    next.pgs_.emplace(id, pg);
  }
  next.pending_.assign(state.pending.begin(), state.pending.end());
  next.next_pg_ = state.next_pg;
  for (std::uint32_t i = 0; i < next.nodes_.size(); ++i) next.reindex(i, false);
  *this = std::move(next);
  return OpResult::ok();
}

std::vector<std::string> ClusterState::check_invariants() const {
  std::vector<std::string> problems;
  std::vector<ResourceVector> held(nodes_.size());
  for (const auto& [id, pg] : pgs_) {
    const std::string name = "placement group " + std::to_string(id);
    if (pg.id != id) problems.push_back(name + " says its id is " + std::to_string(pg.id));
    if (pg.state != PgState::kReady) continue;
    if (pg.nodes.size() != pg.bundles.size()) {
      problems.push_back(name + " places " + std::to_string(pg.bundles.size()) + " bundles on " +
                         std::to_string(pg.nodes.size()) + " nodes");
      continue;
    }
    for (std::size_t b = 0; b < pg.bundles.size(); ++b) {
      if (pg.nodes[b] >= nodes_.size()) {
        problems.push_back(name + " places a bundle on node " + std::to_string(pg.nodes[b]) + " of " +
                           std::to_string(nodes_.size()));
        continue;
      }
      held[pg.nodes[b]] += pg.bundles[b];
    }
  }
  // The pending queue holds each pending group once, and nothing else.
  std::set<PgId> queued;
  for (const PgId id : pending_) {
    const auto it = pgs_.find(id);
    if (it == pgs_.end() || it->second.state != PgState::kPending || !queued.insert(id).second) {
      problems.push_back("pending placement group " + std::to_string(id) +
                         (it == pgs_.end() ? " does not exist" : " is not a pending group queued once"));
    }
  }
  for (const auto& [id, pg] : pgs_) {
    if (pg.state == PgState::kPending && queued.count(id) == 0) {
      problems.push_back("placement group " + std::to_string(id) + " is pending but not queued");
    }
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto& ledger = nodes_[i].ledger;
    if (!(ledger.used() + ledger.reserved()).fits_in(ledger.capacity()) || !ledger.used().is_non_negative()) {
      problems.push_back("node " + nodes_[i].spec.name + " is over capacity: " + ledger.used().to_string());
    }
    if (!(ledger.used() == held[i])) {
      problems.push_back("node " + nodes_[i].spec.name + " books " + ledger.used().to_string() +
                         " but its placement groups hold " + held[i].to_string());
    }
  }
  return problems;
}

}  // namespace meshsim::scheduler
