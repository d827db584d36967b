#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/batching/batching_options.hpp"

namespace meshsim::cluster {

// An instance's host-memory tier of KV blocks, as vLLM's native CPU offloading keeps it
// (its CPU offloading manager): `capacity` slots of one block each, blocks named by their
// content hash. A store is two-phase: prepare_store reserves slots (evicting what the
// policy chooses, never a block being read or one of the blocks asked for) and the blocks
// become readable at complete_store; a load pins its blocks from prepare_load to
// complete_load, so they cannot be evicted under the copy. Slots never used are handed out
// first, in order, then the most recently freed.
//
// Costs: lookup O(blocks asked); touch O(blocks); prepare_store O(blocks + the blocks
// skipped while choosing victims: pinned, protected or not yet stored ones).
class HostKvStore {
 public:
  HostKvStore(std::uint32_t capacity, HostEviction policy);

  // Leading blocks of `hashes` stored and readable (a block still being stored ends it).
  std::uint32_t lookup(std::span<const std::uint64_t> hashes) const;
  // Marks the blocks used, last first, so the first of them is the most recent: LRU moves
  // each to the most recent end; ARC promotes a readable block seen once to the frequent
  // list, and a block of a ghost list moves ARC's target toward its list.
  void touch(std::span<const std::uint64_t> hashes);

  struct StorePlan {
    std::vector<std::uint64_t> to_store;  // the blocks asked for that were not stored yet
    std::vector<std::uint32_t> slots;     // where each goes
    std::vector<std::uint64_t> evicted;   // what made room, in eviction order
  };
  // Reserves slots for the blocks not stored yet; none when room cannot be made (every
  // candidate pinned or asked for), changing nothing.
  std::optional<StorePlan> prepare_store(std::span<const std::uint64_t> hashes);
  // The copy of prepared blocks ended: on success those prepared become readable; on
  // failure they are dropped (blocks already readable stay).
  void complete_store(std::span<const std::uint64_t> hashes, bool success = true);
  // Pins readable blocks for a copy to the GPU; returns their slots.
  std::vector<std::uint32_t> prepare_load(std::span<const std::uint64_t> hashes);
  void complete_load(std::span<const std::uint64_t> hashes);

  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t free_slots() const {
    return static_cast<std::uint32_t>(free_.size()) + capacity_ - allocated_;
  }
  std::size_t stored() const { return blocks_.size(); }  // readable or being stored
  // ARC's state, for its tests: list sizes, membership, the target size of T1.
  std::size_t t1_size() const { return t1_.size(); }
  std::size_t t2_size() const { return t2_.size(); }
  bool in_t1(std::uint64_t hash) const;
  bool in_t2(std::uint64_t hash) const;
  bool in_ghost_b1(std::uint64_t hash) const { return b1_index_.contains(hash); }
  bool in_ghost_b2(std::uint64_t hash) const { return b2_index_.contains(hash); }
  std::size_t ghost_b1_size() const { return b1_.size(); }
  std::size_t ghost_b2_size() const { return b2_.size(); }
  double arc_target_t1() const { return target_t1_; }
  void set_arc_target_t1(double target) { target_t1_ = target; }

 private:
  enum class List : std::uint8_t { kT1, kT2 };  // LRU keeps every block in kT1
  struct Block {
    std::uint32_t slot = 0;
    std::int32_t readers = -1;  // -1: being stored, not readable; else loads in progress
    List list = List::kT1;
    std::list<std::uint64_t>::iterator at;
  };
  using Order = std::list<std::uint64_t>;  // least recent first

  Order& order(List list) { return list == List::kT1 ? t1_ : t2_; }
  void move_to_back(std::uint64_t hash, Block& block, List to);
  // The n blocks to evict, or none when fewer can go; changes nothing.
  std::optional<std::vector<std::uint64_t>> choose_victims(std::uint32_t n,
                                                           const std::unordered_set<std::uint64_t>& protect) const;
  void evict(std::uint64_t hash);
  static void push_ghost(Order& ghost, std::unordered_map<std::uint64_t, Order::iterator>& index, std::uint64_t hash);
  static void drop_ghost(Order& ghost, std::unordered_map<std::uint64_t, Order::iterator>& index, std::uint64_t hash);
  void trim_ghosts();

  std::uint32_t capacity_;
  HostEviction policy_;
  std::uint32_t allocated_ = 0;        // slots ever handed out
  std::vector<std::uint32_t> free_;    // freed slots, the last freed at the back
  std::unordered_map<std::uint64_t, Block> blocks_;
  Order t1_, t2_;
  // ARC's ghosts: hashes recently evicted from T1 (b1) and T2 (b2), at most capacity each.
  Order b1_, b2_;
  std::unordered_map<std::uint64_t, Order::iterator> b1_index_, b2_index_;
  double target_t1_ = 0.0;
};

}  // namespace meshsim::cluster
