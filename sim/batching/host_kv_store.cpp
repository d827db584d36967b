#include "sim/batching/host_kv_store.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

HostKvStore::HostKvStore(std::uint32_t capacity, HostEviction policy) : capacity_(capacity), policy_(policy) {}

HostKvStore::List HostKvStore::list_of(std::uint64_t hash) const {
  const std::uint32_t node = node_of(hash);
  return node == kNone ? kOff : nodes_[node].list;
}

std::uint32_t HostKvStore::new_node(std::uint64_t hash) {
  std::uint32_t node;
  if (spare_nodes_.empty()) {
    node = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  } else {
    node = spare_nodes_.back();
    spare_nodes_.pop_back();
    nodes_[node] = Node{};
  }
  nodes_[node].hash = hash;
  index_.insert(hash, node);
  return node;
}

void HostKvStore::drop_node(std::uint32_t node) {
  index_.erase(nodes_[node].hash);
  spare_nodes_.push_back(node);
}

void HostKvStore::link(std::uint32_t node, List list) {
  Node& n = nodes_[node];
  Chain& chain = chains_[list];
  n.list = list;
  n.prev = chain.newest;
  n.next = kNone;
  if (chain.newest == kNone) {
    chain.oldest = node;
  } else {
    nodes_[chain.newest].next = node;
  }
  chain.newest = node;
  ++chain.size;
}

void HostKvStore::unlink(std::uint32_t node) {
  Node& n = nodes_[node];
  Chain& chain = chains_[n.list];
  if (n.prev == kNone) {
    chain.oldest = n.next;
  } else {
    nodes_[n.prev].next = n.next;
  }
  if (n.next == kNone) {
    chain.newest = n.prev;
  } else {
    nodes_[n.next].prev = n.prev;
  }
  --chain.size;
  n.list = kOff;
}

std::uint32_t HostKvStore::lookup(std::span<const std::uint64_t> hashes) const {
  std::uint32_t hits = 0;
  for (const std::uint64_t hash : hashes) {
    const std::uint32_t node = node_of(hash);
    if (node == kNone || nodes_[node].list > kT2 || nodes_[node].readers < 0) break;
    ++hits;
  }
  return hits;
}

bool HostKvStore::loading(std::uint64_t hash) const {
  const std::uint32_t node = node_of(hash);
  return node != kNone && nodes_[node].list <= kT2 && nodes_[node].readers > 0;
}

void HostKvStore::touch(std::span<const std::uint64_t> hashes) {
  for (auto it = hashes.rbegin(); it != hashes.rend(); ++it) {
    const std::uint32_t node = node_of(*it);
    if (node != kNone) touch_node(node);
  }
}

void HostKvStore::touch_node(std::uint32_t node) {
  const List list = nodes_[node].list;
  if (list == kB1) {
    // A ghost seen again: the list it was evicted from deserves more room.
    const double delta = std::max(1.0, static_cast<double>(size(kB2)) / static_cast<double>(size(kB1)));
    target_t1_ = std::min(target_t1_ + delta, static_cast<double>(capacity_));
  } else if (list == kB2) {
    const double delta = std::max(1.0, static_cast<double>(size(kB1)) / static_cast<double>(size(kB2)));
    target_t1_ = std::max(target_t1_ - delta, 0.0);
  }
  // ARC: a second use promotes to the frequent list; a block still being stored was only
  // just prepared, so it stays where it is, as the most recent.
  const bool promote = policy_ == HostEviction::kArc && list == kT1 && nodes_[node].readers >= 0;
  unlink(node);
  link(node, promote ? kT2 : list);
}

bool HostKvStore::choose_victims(std::uint32_t n) {
  victims_.clear();
  const auto evictable = [&](std::uint32_t node) { return nodes_[node].readers == 0 && nodes_[node].asked != stamp_; };
  // Each list is walked from its least recent end once (a block skipped stays skipped), and
  // a block is in one list: none is chosen twice.
  std::uint32_t t1 = chains_[kT1].oldest, t2 = chains_[kT2].oldest;
  std::size_t t1_left = size(kT1);  // T1's size as the victims chosen so far leave it
  while (victims_.size() < n) {
    bool found = false;
    if (policy_ == HostEviction::kLru || t1_left >= static_cast<std::size_t>(target_t1_)) {
      while (t1 != kNone && !evictable(t1)) t1 = nodes_[t1].next;
      if (t1 != kNone) {
        victims_.push_back(t1);
        t1 = nodes_[t1].next;
        --t1_left;
        found = true;
      }
    }
    if (!found && policy_ == HostEviction::kArc) {
      while (t2 != kNone && !evictable(t2)) t2 = nodes_[t2].next;
      if (t2 != kNone) {
        victims_.push_back(t2);
        t2 = nodes_[t2].next;
        found = true;
      }
    }
    if (!found) return false;
  }
  return true;
}

void HostKvStore::evict(std::uint32_t node) {
  const List from = nodes_[node].list;
  unlink(node);
  free_.push_back(nodes_[node].slot);
  if (policy_ == HostEviction::kArc) {
    link(node, from == kT1 ? kB1 : kB2);
  } else {
    drop_node(node);
  }
}

void HostKvStore::trim_ghosts() {
  for (const List ghosts : {kB1, kB2}) {
    while (size(ghosts) > capacity_) {
      const std::uint32_t node = chains_[ghosts].oldest;
      unlink(node);
      // A ghost asked for by this store is about to be stored: it keeps its node.
      if (nodes_[node].asked != stamp_) drop_node(node);
    }
  }
}

bool HostKvStore::reserve(std::span<const std::uint64_t> hashes, StorePlan* plan) {
  ++stamp_;
  asked_nodes_.clear();
  seen_nodes_.clear();
  // Stamps the blocks asked for: a block asked for twice is stored once, and one already
  // stored must still be there after the store.
  for (const std::uint64_t hash : hashes) {
    std::uint32_t node = node_of(hash);
    if (node == kNone) {
      node = new_node(hash);
    } else if (nodes_[node].asked == stamp_ || nodes_[node].list <= kT2) {
      nodes_[node].asked = stamp_;
      seen_nodes_.push_back(node);
      continue;
    }
    seen_nodes_.push_back(node);
    nodes_[node].asked = stamp_;
    asked_nodes_.push_back(node);
    if (plan != nullptr) plan->to_store.push_back(hash);
  }
  if (asked_nodes_.empty()) return true;
  const auto wanted = static_cast<std::uint32_t>(asked_nodes_.size());
  if (wanted > free_slots()) {
    if (!choose_victims(wanted - free_slots())) {
      for (const std::uint32_t node : asked_nodes_) {
        if (nodes_[node].list == kOff) drop_node(node);
      }
      asked_nodes_.clear();
      return false;
    }
    for (const std::uint32_t node : victims_) {
      if (plan != nullptr) plan->evicted.push_back(nodes_[node].hash);
      evict(node);
    }
    trim_ghosts();
  }
  for (const std::uint32_t node : asked_nodes_) {
    std::uint32_t slot;
    if (allocated_ < capacity_) {
      slot = allocated_++;
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    if (plan != nullptr) plan->slots.push_back(slot);
    if (nodes_[node].list != kOff) unlink(node);  // a ghost stored again
    nodes_[node].slot = slot;
    nodes_[node].readers = -1;
    link(node, kT1);
  }
  return true;
}

std::optional<HostKvStore::StorePlan> HostKvStore::prepare_store(std::span<const std::uint64_t> hashes) {
  StorePlan plan;
  if (!reserve(hashes, &plan)) return std::nullopt;
  return plan;
}

std::optional<std::uint32_t> HostKvStore::store_now(std::span<const std::uint64_t> hashes) {
  if (!reserve(hashes, nullptr)) return std::nullopt;
  const auto stored = static_cast<std::uint32_t>(asked_nodes_.size());
  if (stored == 0) return 0;
  // touch(hashes) and complete_store(hashes) without a probe: every block asked for is
  // stored now, and its node was seen.
  for (auto it = seen_nodes_.rbegin(); it != seen_nodes_.rend(); ++it) touch_node(*it);
  for (const std::uint32_t node : asked_nodes_) nodes_[node].readers = 0;
  return stored;
}

void HostKvStore::complete_store(std::span<const std::uint64_t> hashes, bool success) {
  for (const std::uint64_t hash : hashes) {
    const std::uint32_t node = node_of(hash);
    if (node == kNone || nodes_[node].list > kT2 || nodes_[node].readers >= 0) continue;  // not one being stored
    if (success) {
      nodes_[node].readers = 0;
      continue;
    }
    unlink(node);
    free_.push_back(nodes_[node].slot);
    drop_node(node);
  }
}

std::vector<std::uint32_t> HostKvStore::prepare_load(std::span<const std::uint64_t> hashes) {
  std::vector<std::uint32_t> slots;
  for (const std::uint64_t hash : hashes) {
    const std::uint32_t node = node_of(hash);
    MESHSIM_CHECK(node != kNone && nodes_[node].list <= kT2 && nodes_[node].readers >= 0,
                  "prepare_load: a block not stored");
    ++nodes_[node].readers;
    slots.push_back(nodes_[node].slot);
  }
  return slots;
}

void HostKvStore::complete_load(std::span<const std::uint64_t> hashes) {
  for (const std::uint64_t hash : hashes) {
    const std::uint32_t node = node_of(hash);
    MESHSIM_CHECK(node != kNone && nodes_[node].list <= kT2 && nodes_[node].readers > 0,
                  "complete_load: a block not being loaded");
    --nodes_[node].readers;
  }
}

}  // namespace meshsim::cluster
