#include "sim/batching/host_kv_store.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

HostKvStore::HostKvStore(std::uint32_t capacity, HostEviction policy) : capacity_(capacity), policy_(policy) {}

bool HostKvStore::in_t1(std::uint64_t hash) const {
  const auto it = blocks_.find(hash);
  return it != blocks_.end() && it->second.list == List::kT1;
}

bool HostKvStore::in_t2(std::uint64_t hash) const {
  const auto it = blocks_.find(hash);
  return it != blocks_.end() && it->second.list == List::kT2;
}

std::uint32_t HostKvStore::lookup(std::span<const std::uint64_t> hashes) const {
  std::uint32_t hits = 0;
  for (const std::uint64_t hash : hashes) {
    const auto it = blocks_.find(hash);
    if (it == blocks_.end() || it->second.readers < 0) break;
    ++hits;
  }
  return hits;
}

void HostKvStore::move_to_back(std::uint64_t hash, Block& block, List to) {
  order(block.list).erase(block.at);
  block.list = to;
  block.at = order(to).insert(order(to).end(), hash);
}

void HostKvStore::touch(std::span<const std::uint64_t> hashes) {
  for (auto it = hashes.rbegin(); it != hashes.rend(); ++it) {
    const std::uint64_t hash = *it;
    if (const auto found = blocks_.find(hash); found != blocks_.end()) {
      Block& block = found->second;
      // ARC: a second use promotes to the frequent list; a block still being stored was
      // only just prepared, so it stays where it is, as the most recent.
      const bool promote = policy_ == HostEviction::kArc && block.list == List::kT1 && block.readers >= 0;
      move_to_back(hash, block, promote ? List::kT2 : block.list);
      continue;
    }
    if (policy_ != HostEviction::kArc) continue;
    // A ghost seen again: the list it was evicted from deserves more room.
    if (const auto ghost = b1_index_.find(hash); ghost != b1_index_.end()) {
      const double delta = std::max(1.0, static_cast<double>(b2_.size()) / static_cast<double>(b1_.size()));
      target_t1_ = std::min(target_t1_ + delta, static_cast<double>(capacity_));
      b1_.splice(b1_.end(), b1_, ghost->second);
    } else if (const auto ghost2 = b2_index_.find(hash); ghost2 != b2_index_.end()) {
      const double delta = std::max(1.0, static_cast<double>(b1_.size()) / static_cast<double>(b2_.size()));
      target_t1_ = std::max(target_t1_ - delta, 0.0);
      b2_.splice(b2_.end(), b2_, ghost2->second);
    }
  }
}

std::optional<std::vector<std::uint64_t>> HostKvStore::choose_victims(
    std::uint32_t n, const std::unordered_set<std::uint64_t>& protect) const {
  std::vector<std::uint64_t> victims;
  const auto evictable = [&](std::uint64_t hash) { return blocks_.at(hash).readers == 0 && !protect.contains(hash); };
  // Each list is walked from its least recent end once (a block skipped stays skipped), and
  // a block is in one list: none is chosen twice.
  auto t1 = t1_.begin(), t2 = t2_.begin();
  std::size_t t1_left = t1_.size();  // T1's size as the victims chosen so far leave it
  while (victims.size() < n) {
    bool found = false;
    if (policy_ == HostEviction::kLru || t1_left >= static_cast<std::size_t>(target_t1_)) {
      while (t1 != t1_.end() && !evictable(*t1)) ++t1;
      if (t1 != t1_.end()) {
        victims.push_back(*t1++);
        --t1_left;
        found = true;
      }
    }
    if (!found && policy_ == HostEviction::kArc) {
      while (t2 != t2_.end() && !evictable(*t2)) ++t2;
      if (t2 != t2_.end()) {
        victims.push_back(*t2++);
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return victims;
}

void HostKvStore::push_ghost(Order& ghost, std::unordered_map<std::uint64_t, Order::iterator>& index,
                             std::uint64_t hash) {
  drop_ghost(ghost, index, hash);
  index[hash] = ghost.insert(ghost.end(), hash);
}

void HostKvStore::drop_ghost(Order& ghost, std::unordered_map<std::uint64_t, Order::iterator>& index,
                             std::uint64_t hash) {
  if (const auto it = index.find(hash); it != index.end()) {
    ghost.erase(it->second);
    index.erase(it);
  }
}

void HostKvStore::evict(std::uint64_t hash) {
  const auto it = blocks_.find(hash);
  Block& block = it->second;
  order(block.list).erase(block.at);
  if (policy_ == HostEviction::kArc) {
    if (block.list == List::kT1) {
      push_ghost(b1_, b1_index_, hash);
    } else {
      push_ghost(b2_, b2_index_, hash);
    }
  }
  free_.push_back(block.slot);
  blocks_.erase(it);
}

void HostKvStore::trim_ghosts() {
  while (b1_.size() > capacity_) drop_ghost(b1_, b1_index_, b1_.front());
  while (b2_.size() > capacity_) drop_ghost(b2_, b2_index_, b2_.front());
}

std::optional<HostKvStore::StorePlan> HostKvStore::prepare_store(std::span<const std::uint64_t> hashes) {
  StorePlan plan;
  std::unordered_set<std::uint64_t> asked;  // a block asked for twice is stored once
  for (const std::uint64_t hash : hashes) {
    if (!blocks_.contains(hash) && asked.insert(hash).second) plan.to_store.push_back(hash);
  }
  if (plan.to_store.empty()) return plan;
  const std::uint32_t wanted = static_cast<std::uint32_t>(plan.to_store.size());
  if (wanted > free_slots()) {
    // A block asked for and already stored must still be there after the store.
    const std::unordered_set<std::uint64_t> protect(hashes.begin(), hashes.end());
    auto victims = choose_victims(wanted - free_slots(), protect);
    if (!victims) return std::nullopt;
    for (const std::uint64_t hash : *victims) evict(hash);
    trim_ghosts();
    plan.evicted = std::move(*victims);
  }
  for (const std::uint64_t hash : plan.to_store) {
    std::uint32_t slot;
    if (allocated_ < capacity_) {
      slot = allocated_++;
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    plan.slots.push_back(slot);
    Block block{slot, -1, List::kT1, {}};
    block.at = t1_.insert(t1_.end(), hash);
    blocks_.emplace(hash, block);
    drop_ghost(b1_, b1_index_, hash);
    drop_ghost(b2_, b2_index_, hash);
  }
  return plan;
}

void HostKvStore::complete_store(std::span<const std::uint64_t> hashes, bool success) {
  for (const std::uint64_t hash : hashes) {
    const auto it = blocks_.find(hash);
    if (it == blocks_.end() || it->second.readers >= 0) continue;  // not one being stored
    if (success) {
      it->second.readers = 0;
      continue;
    }
    order(it->second.list).erase(it->second.at);
    free_.push_back(it->second.slot);
    blocks_.erase(it);
  }
}

std::vector<std::uint32_t> HostKvStore::prepare_load(std::span<const std::uint64_t> hashes) {
  std::vector<std::uint32_t> slots;
  for (const std::uint64_t hash : hashes) {
    const auto it = blocks_.find(hash);
    MESHSIM_CHECK(it != blocks_.end() && it->second.readers >= 0, "prepare_load: a block not stored");
    ++it->second.readers;
    slots.push_back(it->second.slot);
  }
  return slots;
}

void HostKvStore::complete_load(std::span<const std::uint64_t> hashes) {
  for (const std::uint64_t hash : hashes) {
    const auto it = blocks_.find(hash);
    MESHSIM_CHECK(it != blocks_.end() && it->second.readers > 0, "complete_load: a block not being loaded");
    --it->second.readers;
  }
}

}  // namespace meshsim::cluster
