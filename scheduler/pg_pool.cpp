#include "scheduler/pg_pool.hpp"

#include <algorithm>

namespace meshsim::scheduler {

OpResult PgPool::reserve(ClusterState& cluster) {
  for (std::size_t i = 0; i < config_.high_priority_pg_specs.size(); ++i) {
    auto pg = cluster.create_placement_group(pool_ + ":reserved-" + std::to_string(i), {config_.high_priority_pg_specs[i]},
                                             strategy_, /*pend_if_unplaceable=*/true);
    if (!pg.result.success) return pg.result;
    pgs_.emplace(*pg.id, Entry{config_.high_priority_pg_specs[i], true, false, false});
  }
  return OpResult::ok();
}

const ResourceVector* PgPool::shape(PgId id) const {
  const auto it = pgs_.find(id);
  return it == pgs_.end() ? nullptr : &it->second.shape;
}

std::optional<PgId> PgPool::find_idle(const ClusterState& cluster, const ResourceVector& need, bool reserved,
                                      std::optional<PgId> preferred, const std::vector<PgId>& freeing) const {
  auto usable = [&](PgId id, const Entry& entry) {
    const bool idle = !entry.in_use || std::find(freeing.begin(), freeing.end(), id) != freeing.end();
    const PlacementGroup* pg = cluster.placement_group(id);
    return idle && entry.reserved == reserved && need.fits_in(entry.shape) && pg != nullptr &&
           pg->state == PgState::kReady;
  };
  if (preferred) {
    const auto it = pgs_.find(*preferred);
    if (it != pgs_.end() && usable(it->first, it->second)) return *preferred;
  }
  // An exact fit first, then the first that fits, by id: deterministic.
  std::optional<PgId> fallback;
  for (const auto& [id, entry] : pgs_) {
    if (!usable(id, entry)) continue;
    if (entry.shape == need) return id;
    if (!fallback) fallback = id;
  }
  return fallback;
}

std::uint32_t PgPool::live_dynamic() const {
  return static_cast<std::uint32_t>(
      std::count_if(pgs_.begin(), pgs_.end(), [](const auto& kv) { return !kv.second.reserved; }));
}

bool PgPool::can_acquire(const ClusterState& cluster, const ResourceVector& need, bool high_priority,
                         const std::vector<PgId>& freeing) const {
  if (high_priority && find_idle(cluster, need, true, std::nullopt, freeing)) return true;
  if (!config_.enable_dynamic_pgs) return false;
  // Dynamic PGs freed without reuse are destroyed: they count neither as idle nor live,
  // and their node resources come free.
  std::vector<PgId> reusable, destroyed;
  for (const PgId id : freeing) {
    const auto it = pgs_.find(id);
    if (it == pgs_.end() || it->second.reserved) continue;
    (config_.enable_pg_reuse ? reusable : destroyed).push_back(id);
  }
  if (find_idle(cluster, need, false, std::nullopt, reusable)) return true;
  const auto live = live_dynamic() - static_cast<std::uint32_t>(destroyed.size());
  const bool has_idle_dynamic = std::any_of(pgs_.begin(), pgs_.end(), [&](const auto& kv) {
    return !kv.second.reserved && (!kv.second.in_use || std::count(reusable.begin(), reusable.end(), kv.first) != 0);
  });
  if (config_.max_dynamic_pgs != 0 && live >= config_.max_dynamic_pgs && !has_idle_dynamic) return false;
  return cluster.can_place({need}, strategy_, destroyed);
}

std::optional<PgId> PgPool::acquire(ClusterState& cluster, const ResourceVector& need, bool high_priority,
                                    std::optional<PgId> preferred) {
  std::optional<PgId> id;
  if (high_priority) id = find_idle(cluster, need, true, preferred, {});
  if (!id && config_.enable_dynamic_pgs) {
    id = find_idle(cluster, need, false, preferred, {});
    if (!id) {
      if (config_.max_dynamic_pgs != 0 && live_dynamic() >= config_.max_dynamic_pgs) {
        // At the limit: an idle dynamic PG of the wrong shape makes room for one that fits.
        const auto idle = std::find_if(pgs_.begin(), pgs_.end(),
                                       [](const auto& kv) { return !kv.second.reserved && !kv.second.in_use; });
        if (idle == pgs_.end()) return std::nullopt;
        destroy(cluster, idle->first);
      }
      auto pg = cluster.create_placement_group(pool_ + ":dynamic-" + std::to_string(dynamic_created_), {need},
                                               strategy_, /*pend_if_unplaceable=*/false);
      if (!pg.result.success) return std::nullopt;
      ++dynamic_created_;
      pgs_.emplace(*pg.id, Entry{need, false, false, false});
      id = *pg.id;
    }
  }
  if (!id) return std::nullopt;
  Entry& entry = pgs_.at(*id);
  if (entry.served_before) ++reuse_hits_;
  entry.in_use = true;
  entry.served_before = true;
  return id;
}

void PgPool::release(ClusterState& cluster, PgId id) {
  const auto it = pgs_.find(id);
  if (it == pgs_.end()) return;
  if (!it->second.reserved && !config_.enable_pg_reuse) {
    destroy(cluster, id);
    return;
  }
  it->second.in_use = false;
}

void PgPool::destroy(ClusterState& cluster, PgId id) {
  const auto it = pgs_.find(id);
  if (it == pgs_.end()) return;
  if (!it->second.reserved) ++dynamic_destroyed_;
  pgs_.erase(it);
  (void)cluster.remove_placement_group(id);
}

void PgPool::destroy_all(ClusterState& cluster) {
  while (!pgs_.empty()) destroy(cluster, pgs_.begin()->first);
}

PgPoolStats PgPool::stats() const {
  PgPoolStats stats;
  for (const auto& [id, entry] : pgs_) {
    if (entry.reserved) {
      ++stats.reserved_total;
      stats.reserved_in_use += entry.in_use ? 1 : 0;
    } else {
      (entry.in_use ? stats.dynamic_in_use : stats.dynamic_idle) += 1;
    }
  }
  stats.dynamic_created = dynamic_created_;
  stats.dynamic_destroyed = dynamic_destroyed_;
  stats.reuse_hits = reuse_hits_;
  return stats;
}

std::vector<std::string> PgPool::check_invariants(const ClusterState& cluster) const {
  std::vector<std::string> problems;
  for (const auto& [id, entry] : pgs_) {
    if (cluster.placement_group(id) == nullptr) {
      problems.push_back("PG pool of " + pool_ + " lists placement group " + std::to_string(id) + " the cluster lost");
    }
  }
  if (config_.max_dynamic_pgs != 0 && live_dynamic() > config_.max_dynamic_pgs) {
    problems.push_back("PG pool of " + pool_ + " holds more dynamic PGs than max_dynamic_pgs");
  }
  return problems;
}

}  // namespace meshsim::scheduler
