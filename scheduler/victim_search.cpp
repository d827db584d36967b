#include "scheduler/victim_search.hpp"

#include <algorithm>

namespace meshsim::scheduler {

bool VictimSearch::fits_after(const TaskSpec& spec, const std::vector<const Task*>& victims) const {
  ResourceVector available = agents_.pool(spec.pool)->ledger.available();
  std::vector<PgId> pooled_pgs, own_pgs;
  const PgPool* pool = pg_pools_.find(spec.pool);
  for (const Task* victim : victims) {
    const Agent* agent = agents_.agent(victim->agent_id);
    if (agent == nullptr || !agent->dedicated) continue;
    if (victim->pool == spec.pool) available += agent->spec.resources;
    if (pool != nullptr && pool->holds(agent->placement_group)) {
      pooled_pgs.push_back(agent->placement_group);
    } else if (agent->owns_placement_group) {
      own_pgs.push_back(agent->placement_group);
    }
  }
  if (!spec.resources.fits_in(available)) return false;
  if (pool != nullptr) return pool->can_acquire(agents_.cluster(), spec.resources, pool->is_high_priority(spec.priority), pooled_pgs);
  return agents_.cluster().can_place({spec.resources}, agents_.pool(spec.pool)->spec.placement_strategy, own_pgs);
}

bool VictimSearch::frees_fitting_pg(const Task& victim, const TaskSpec& spec) const {
  const Agent* agent = agents_.agent(victim.agent_id);
  const PgPool* pool = pg_pools_.find(spec.pool);
  if (agent == nullptr || !agent->dedicated || pool == nullptr) return false;
  const ResourceVector* shape = pool->shape(agent->placement_group);
  return shape != nullptr && spec.resources.fits_in(*shape);
}

// The room preempting a set of victims frees for `spec`, in a pool without a PG pool:
// its quota plus what same-pool victims give back, and per node the bundles of the
// victims' own placement groups. fits() is fits_after(spec, victims), kept up to date as
// victims are added and removed: each touches only its own nodes, so growing a set of n
// victims and then dropping the unnecessary ones costs O(n), not O(n^2).
class VictimSearch::FreedRoom {
 public:
  FreedRoom(const VictimSearch& core, const TaskSpec& spec)
      : core_(core), spec_(spec), quota_(core.agents_.pool(spec.pool)->ledger.available()) {
    fits_now_ = core.agents_.cluster().can_place({spec.resources}, core.agents_.pool(spec.pool)->spec.placement_strategy);
  }
  void add(const Task& victim) { change(victim, /*adding=*/true); }
  void remove(const Task& victim) { change(victim, /*adding=*/false); }
  // fits() after add(victim), for one victim on top of what was added, without copying.
  bool fits_with(const Task& victim) const {
    const Agent* agent = core_.agents_.agent(victim.agent_id);
    if (agent == nullptr || !agent->dedicated) return fits();
    if (!spec_.resources.fits_in(victim.pool == spec_.pool ? quota_ + agent->spec.resources : quota_)) return false;
    if (fits_now_ || fitting_nodes_ > 0) return true;
    if (!agent->owns_placement_group) return false;
    const PlacementGroup* pg = core_.agents_.cluster().placement_group(agent->placement_group);
    if (pg == nullptr || pg->state != PgState::kReady) return false;
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      ResourceVector freed = pg->bundles[b];
      if (const auto* already = freed_on(pg->nodes[b])) freed += *already;
      // Bundles of one PG on the same node free together.
      for (std::size_t other = 0; other < pg->bundles.size(); ++other) {
        if (other != b && pg->nodes[other] == pg->nodes[b]) freed += pg->bundles[other];
      }
      if (node_fits(pg->nodes[b], freed)) return true;
    }
    return false;
  }
  // Some node holds the spec with no victim (only the quota can stand in the way).
  bool fits_now() const { return fits_now_; }
  bool fits() const { return spec_.resources.fits_in(quota_) && (fits_now_ || fitting_nodes_ > 0); }

 private:
  void change(const Task& victim, bool adding) {
    const Agent* agent = core_.agents_.agent(victim.agent_id);
    if (agent == nullptr || !agent->dedicated) return;
    if (victim.pool == spec_.pool) adding ? quota_ += agent->spec.resources : quota_ -= agent->spec.resources;
    if (!agent->owns_placement_group) return;
    const PlacementGroup* pg = core_.agents_.cluster().placement_group(agent->placement_group);
    if (pg == nullptr || pg->state != PgState::kReady) return;
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      const auto node = pg->nodes[b];
      auto it = std::find_if(freed_.begin(), freed_.end(), [&](const auto& entry) { return entry.first == node; });
      if (it == freed_.end()) it = freed_.emplace(freed_.end(), node, ResourceVector{});
      const bool fitted = node_fits(node, it->second);
      adding ? it->second += pg->bundles[b] : it->second -= pg->bundles[b];
      fitting_nodes_ += static_cast<int>(node_fits(node, it->second)) - static_cast<int>(fitted);
    }
  }
  const ResourceVector* freed_on(std::uint32_t node) const {
    const auto it = std::find_if(freed_.begin(), freed_.end(), [&](const auto& entry) { return entry.first == node; });
    return it == freed_.end() ? nullptr : &it->second;
  }
  bool node_fits(std::uint32_t index, const ResourceVector& freed) const {
    const Node& node = core_.agents_.cluster().nodes()[index];
    return node.state == NodeState::kUp && spec_.resources.fits_in_sum(node.ledger.available(), freed);
  }

  const VictimSearch& core_;
  const TaskSpec& spec_;
  ResourceVector quota_;
  bool fits_now_ = false;
  std::vector<std::pair<std::uint32_t, ResourceVector>> freed_;  // by node, in the order first touched
  int fitting_nodes_ = 0;  // nodes in freed_ that hold the spec with what is freed there
};

std::optional<std::vector<VictimSearch::Victim>> VictimSearch::choose(const TaskSpec& spec, bool pg_reuse_only,
                                                                     std::size_t* considered) {
  const IncomingTask incoming{spec.priority, spec.pool, spec.labels};
  const bool quota_short = !spec.resources.fits_in(agents_.pool(spec.pool)->ledger.available());
  // Only victims whose preemption gives something back help; when the pool quota binds,
  // only those of the same pool.
  auto helps = [&](const VictimIndex::Class& c) {
    return c.gives_back && (!quota_short || c.pool == spec.pool) && (!pg_reuse_only || c.pool == spec.pool);
  };
  auto task_of = [&](const VictimIndex::Candidate& c) -> const Task* { return running_.at(c.seq); };
  auto allowed = [&](const VictimIndex::Candidate& c) { return strategy_.should_preempt(incoming, *task_of(c)); };

  // 1. One victim, if one is enough: in each class the best-scoring victim that frees
  //    enough (looking at most kSingleVictimScan deep); one whose PG the incoming task can
  //    take over wins, then the higher score.
  std::optional<Victim> single;
  bool single_reuses = false;
  const bool pooled = pg_pools_.find(spec.pool) != nullptr;
  std::optional<FreedRoom> base;  // without a PG pool: the room with no victim yet
  if (!pooled) base.emplace(*this, spec);
  // A lone victim frees at most its class's largest GPU share on one node: when even the
  // node with the most free GPUs could not hold the task with that, the class has no
  // single victim to offer and its scan (kSingleVictimScan deep) is skipped.
  const bool nodes_short = base && !base->fits_now();
  const std::int64_t most_free_gpu = agents_.cluster().most_free_gpu_milli();
  for (std::uint32_t id = 0; id < index_.class_count(); ++id) {
    const VictimIndex::Class& c = index_.class_of(id);
    if (!helps(c)) continue;
    if (nodes_short && spec.resources.gpu_milli() > most_free_gpu + c.most_gpu_freed_on_a_node_milli) continue;
    auto cursor = index_.open(incoming, now_, [&](const VictimIndex::Class& other) { return &other == &c; });
    std::optional<Victim> found;
    bool found_reuses = false;
    for (std::size_t seen = 0; seen < kSingleVictimScan; ++seen) {
      const auto candidate = cursor.next();
      if (!candidate) break;
      if (!allowed(*candidate)) continue;
      const Task* victim = task_of(*candidate);
      if (base) {
        if (!base->fits_with(*victim)) continue;
      } else if (!fits_after(spec, {victim})) {
        continue;
      }
      const bool reuses = frees_fitting_pg(*victim, spec);
      if (pg_reuse_only && !reuses) continue;
      if (!found) found = Victim{victim, candidate->reason, candidate->score};
      if (reuses) {
        found = Victim{victim, candidate->reason, candidate->score};
        found_reuses = true;
      }
      // Without a PG pool no victim's PG is taken over: the first that fits is the one.
      if (found_reuses || !pooled) break;
    }
    if (!found) continue;
    const bool better = !single || (found_reuses && !single_reuses) ||
                        (found_reuses == single_reuses &&
                         (found->score > single->score || (found->score == single->score && found->task->seq < single->task->seq)));
    if (better) {
      single = found;
      single_reuses = found_reuses;
    }
  }
  if (single) return std::vector<Victim>{*single};
  if (pg_reuse_only) return std::nullopt;

  // 2. Several: take the best-scoring until enough is free, then drop any the others
  //    make unnecessary (lowest score first), so no more are preempted than needed.
  //    Without a PG pool the room they free is kept up to date victim by victim (a
  //    failing search, the common case for queued work, then costs one pass).
  auto cursor = index_.open(incoming, now_, helps);
  std::vector<Victim> chosen;
  std::vector<const Task*> tasks;
  std::optional<FreedRoom> room = base;
  const auto enough = [&] { return room ? room->fits() : fits_after(spec, tasks); };
  std::size_t seen = 0;
  while (!enough()) {
    const auto candidate = cursor.next();
    if (!candidate) {
      if (considered != nullptr) *considered = seen;
      return std::nullopt;
    }
    if (!allowed(*candidate)) continue;
    ++seen;
    chosen.push_back(Victim{task_of(*candidate), candidate->reason, candidate->score});
    tasks.push_back(chosen.back().task);
    if (room) room->add(*chosen.back().task);
  }
  // Lowest score first: drop each victim the others make unnecessary.
  for (std::size_t i = chosen.size(); i-- > 0;) {
    bool unnecessary = false;
    if (room) {
      room->remove(*tasks[i]);
      unnecessary = room->fits();
      if (!unnecessary) room->add(*tasks[i]);
    } else {
      std::vector<const Task*> without = tasks;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      unnecessary = fits_after(spec, without);
    }
    if (unnecessary) {
      tasks.erase(tasks.begin() + static_cast<std::ptrdiff_t>(i));
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return chosen;
}

VictimIndex::TaskInfo victim_info(const Task& task, const AgentManager& agents) {
  const Agent* agent = agents.agent(task.agent_id);
  const bool dedicated = agent != nullptr && agent->dedicated;
  std::int64_t gpu_on_a_node = 0;
  const PlacementGroup* pg = dedicated && agent->owns_placement_group
                                 ? agents.cluster().placement_group(agent->placement_group)
                                 : nullptr;
  if (pg != nullptr && pg->state == PgState::kReady) {
    for (std::size_t b = 0; b < pg->bundles.size(); ++b) {
      std::int64_t on_node = 0;
      for (std::size_t other = 0; other < pg->bundles.size(); ++other) {
        if (pg->nodes[other] == pg->nodes[b]) on_node += pg->bundles[other].gpu_milli();
      }
      gpu_on_a_node = std::max(gpu_on_a_node, on_node);
    }
  }
  return VictimIndex::TaskInfo{task.seq,     task.pool,       task.labels, dedicated ? agent->spec.resources : ResourceVector{},
                               gpu_on_a_node, task.priority, task.start_time.seconds(), task.deadline()};
}

}  // namespace meshsim::scheduler
