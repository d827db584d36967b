#include "sim/cluster/pool_ledger.hpp"

namespace meshsim::cluster {

ServingSystem::InstanceCounts PoolLedger::counts() const {
  ServingSystem::InstanceCounts counts;
  for (std::size_t tag = 0; tag < pools_.size(); ++tag) {
    std::uint32_t existing = 0;
    for (const std::uint32_t n : pools_[tag].by_state) existing += n;
    switch (static_cast<InstanceTag>(tag)) {
      case InstanceTag::kPrompt: counts.prompt = existing; break;
      case InstanceTag::kToken: counts.token = existing; break;
      case InstanceTag::kMixed: counts.mixed = existing; break;
    }
    counts.starting += pools_[tag].count(InstanceState::kStarting);
    counts.active += pools_[tag].count(InstanceState::kActive);
    counts.draining += pools_[tag].count(InstanceState::kDraining);
    counts.inactive += pools_[tag].count(InstanceState::kInactive);
  }
  return counts;
}

void PoolLedger::move(std::uint32_t id, InstanceTag tag, std::optional<InstanceState> from,
                      std::optional<InstanceState> to) {
  PoolTotals& pool = pools_[index(tag)];
  if (from) {
    --pool.by_state[static_cast<std::size_t>(*from)];
    if (*from == InstanceState::kInactive) inactive_[index(tag)].erase(id);
  }
  if (to) {
    ++pool.by_state[static_cast<std::size_t>(*to)];
    if (*to == InstanceState::kInactive) inactive_[index(tag)].insert(id);
  }
}

void PoolLedger::arrived(InstanceTag tag, std::uint64_t tokens) {
  PoolTotals& pool = pools_[index(tag)];
  ++pool.arrived_requests;
  pool.arrived_tokens += tokens;
}

std::optional<std::uint32_t> PoolLedger::first_inactive(InstanceTag tag) const {
  const auto& ids = inactive_[index(tag)];
  if (ids.empty()) return std::nullopt;
  return *ids.begin();
}

std::vector<std::string> PoolLedger::check_invariants(const std::array<PoolTotals, 3>& want,
                                                      const std::array<ActiveLoad, 3>& walked) const {
  std::vector<std::string> problems;
  for (std::size_t tag = 0; tag < pools_.size(); ++tag) {
    const std::string pool = "pool " + std::string(kInstanceTagNames.name(static_cast<InstanceTag>(tag)));
    if (tracks_loads_ && (walked[tag].requests != loads_[tag].requests ||
                          walked[tag].pending_tokens != loads_[tag].pending_tokens)) {
      problems.push_back(pool + ": its tracked ACTIVE load disagrees with its instances");
    }
    if (want[tag].by_state != pools_[tag].by_state) problems.push_back(pool + ": its totals disagree with its instances");
    if (inactive_[tag].size() != want[tag].count(InstanceState::kInactive)) {
      problems.push_back(pool + ": its INACTIVE index holds " + std::to_string(inactive_[tag].size()) + " ids for " +
                         std::to_string(want[tag].count(InstanceState::kInactive)) + " INACTIVE instances");
    }
  }
  return problems;
}

}  // namespace meshsim::cluster
