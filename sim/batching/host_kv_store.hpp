#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/engine/flat_u64_map.hpp"

namespace meshsim::cluster {

// An instance's host-memory tier of KV blocks, as vLLM's native CPU offloading keeps it
// (its CPU offloading manager): `capacity` slots of one block each, blocks named by their
// content hash. A store is two-phase: prepare_store reserves slots (evicting what the
// policy chooses, never a block being read or one of the blocks asked for) and the blocks
// become readable at complete_store; a load pins its blocks from prepare_load to
// complete_load, so they cannot be evicted under the copy. Slots never used are handed out
// first, in order, then the most recently freed.
//
// Every hash it knows (a block stored or being stored, or an ARC ghost) is one node in a
// flat table, linked into one of four intrusive lists by index: no allocation per block
// once the table has grown, one probe per hash (a tier of millions of 16-token blocks
// touches every block of every request twice).
//
// Costs: lookup O(blocks asked); touch O(blocks); prepare_store O(blocks + the blocks
// skipped while choosing victims: pinned, protected or not yet stored ones).
class HostKvStore {
 public:
  HostKvStore(std::uint32_t capacity, HostEviction policy);

  // Leading blocks of `hashes` stored and readable (a block still being stored ends it).
  std::uint32_t lookup(std::span<const std::uint64_t> hashes) const;
  // Whether a load is copying the block.
  bool loading(std::uint64_t hash) const;
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
  // prepare_store, touch and complete_store in one, for a tier that does not wait for its
  // stores' copies: how many blocks were stored, or none when room cannot be made.
  std::optional<std::uint32_t> store_now(std::span<const std::uint64_t> hashes);
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
  std::size_t stored() const { return size(kT1) + size(kT2); }  // readable or being stored
  // ARC's state, for its tests: list sizes, membership, the target size of T1.
  std::size_t t1_size() const { return size(kT1); }
  std::size_t t2_size() const { return size(kT2); }
  bool in_t1(std::uint64_t hash) const { return list_of(hash) == kT1; }
  bool in_t2(std::uint64_t hash) const { return list_of(hash) == kT2; }
  bool in_ghost_b1(std::uint64_t hash) const { return list_of(hash) == kB1; }
  bool in_ghost_b2(std::uint64_t hash) const { return list_of(hash) == kB2; }
  std::size_t ghost_b1_size() const { return size(kB1); }
  std::size_t ghost_b2_size() const { return size(kB2); }
  double arc_target_t1() const { return target_t1_; }
  void set_arc_target_t1(double target) { target_t1_ = target; }

 private:
  static constexpr std::uint32_t kNone = ~0u;
  // T1, T2: stored blocks, least recent first (LRU keeps every block in T1); B1, B2: ARC's
  // ghosts, hashes recently evicted from T1 and T2, at most capacity each; kOff: in no list
  // (a block asked for while prepare_store runs).
  enum List : std::uint8_t { kT1, kT2, kB1, kB2, kOff };
  struct Node {
    std::uint64_t hash = 0;
    std::uint32_t prev = kNone, next = kNone;
    std::uint32_t slot = 0;
    std::int32_t readers = -1;  // -1: being stored, not readable; else loads in progress
    List list = kOff;
    std::uint32_t asked = 0;  // the prepare_store (by its stamp) that asked for it
  };
  struct Chain {
    std::uint32_t oldest = kNone, newest = kNone;
    std::size_t size = 0;
  };

  std::size_t size(List list) const { return chains_[list].size; }
  List list_of(std::uint64_t hash) const;
  std::uint32_t node_of(std::uint64_t hash) const { return index_.find(hash); }
  std::uint32_t new_node(std::uint64_t hash);
  void drop_node(std::uint32_t node);
  void link(std::uint32_t node, List list);  // at the newest end
  void unlink(std::uint32_t node);
  // touch for one block known to the table.
  void touch_node(std::uint32_t node);
  // prepare_store's work; fills `plan` if given. Leaves the blocks it reserved in
  // asked_nodes_, and the node of every hash asked for in seen_nodes_.
  bool reserve(std::span<const std::uint64_t> hashes, StorePlan* plan);
  // The n blocks to evict into victims_, or false when fewer can go; changes nothing.
  bool choose_victims(std::uint32_t n);
  void evict(std::uint32_t node);
  void trim_ghosts();

  std::uint32_t capacity_;
  HostEviction policy_;
  std::uint32_t allocated_ = 0;      // slots ever handed out
  std::vector<std::uint32_t> free_;  // freed slots, the last freed at the back
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> spare_nodes_;
  engine::FlatU64Map index_;  // hash -> node
  Chain chains_[4];
  double target_t1_ = 0.0;
  std::uint32_t stamp_ = 0;  // prepare_store's calls
  std::vector<std::uint32_t> asked_nodes_, seen_nodes_, victims_;  // prepare_store's scratch
};

}  // namespace meshsim::cluster
