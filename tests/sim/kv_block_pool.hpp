#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/flat_u64_map.hpp"

namespace meshsim::cluster {

// The blocks of KvBlockCache (KvSpanCache's slow twin), as vLLM's v1 block pool keeps
// them: a fixed number of blocks of `block_size` tokens, reference-counted (a block of a shared prefix is held by every
// request using it), and, with prefix caching, a table from the chained hash of a full
// block's tokens to the block holding them. A block nobody holds is free but keeps its
// contents, so a later request with the same prefix can take it back (a hit) until it is
// reused for something else (evicted). Free blocks are reused least recently freed first.
// A block of tokens no other request can have (after a request's first own token: its
// chained hash is unique to it) is kept without a table entry: only its request can hit
// it, after a preemption, and finds it by the block's stamp (which changes when the block
// is reused), so the vLLM path spends no hashing or table work on unshared tokens.
//
// Costs: allocate, touch, release and cache amortised O(1); lookup O(1) expected.
// Memory O(blocks). The free list is a ring of block ids in the order they were freed;
// a block taken back by a hit leaves a stale entry behind (an entry counts only while its
// block is free and was freed at that position), skipped when allocation reaches it, and
// the ring is compacted when full (it holds at least twice the blocks ever allocated, so
// at most every that many appends). Allocation then reads the ring in order instead of
// chasing links to random blocks. The table is an engine::FlatU64Map.
//
// Construction is O(1), whatever the capacity (an instance's pool is made at every
// scale-up and environment reset): blocks never allocated sit, in id order, before every
// freed block in the free list, so they are handed out first without being listed; the
// records grow by chunks and the ring by doubling with the blocks handed out. (Reserving the records' whole address space at construction instead halved the RL
// environment's speed on a light load: each reset mapped and faulted in fresh pages.)
class KvBlockPool {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  // `prefix_caching` false: freed blocks forget their contents (nothing is ever hit).
  KvBlockPool(std::uint32_t blocks, bool prefix_caching);

  std::uint32_t blocks() const { return capacity_; }
  // Blocks nobody holds (cached or empty): what allocations can take.
  std::uint32_t free_blocks() const { return free_count_; }
  std::uint32_t used_blocks() const { return blocks() - free_count_; }
  bool prefix_caching() const { return prefix_caching_; }

  // The block holding the full block of tokens with this chained hash, if cached.
  std::uint32_t cached(std::uint64_t hash) const;
  bool held(std::uint32_t block) const { return block < allocated_ && record(block).refs > 0; }
  // One more holder of a cached block (a prefix hit); a free one leaves the free list.
  void touch(std::uint32_t block);
  // A free block for new tokens, least recently freed first; if it held a cached full
  // block, that entry is evicted. Precondition: free_blocks() > 0.
  std::uint32_t allocate();
  // One holder fewer; at none the block joins the free list's most recent end (its
  // contents stay cached until it is reused).
  void release(std::uint32_t block);
  // The block now holds the full block of tokens with `hash`: later requests may hit it.
  // A second block with a hash already cached stays uncached (vLLM keeps the first).
  void cache(std::uint32_t block, std::uint64_t hash);
  // The block now holds a full block of tokens only its request has: kept, without a table
  // entry, until reused. Returns its stamp.
  std::uint32_t keep_private(std::uint32_t block);
  // Whether `block` still holds what it held at `stamp` (keep_private's answer).
  bool holds_private(std::uint32_t block, std::uint32_t stamp) const {
    return record(block).content == Content::kPrivate && record(block).stamp == stamp;
  }

  // Holders of a block (0: free).
  std::uint32_t refs(std::uint32_t block) const { return block < allocated_ ? record(block).refs : 0; }
  // The free blocks in the order allocation takes them (vLLM's free queue). O(blocks).
  std::vector<std::uint32_t> free_queue() const;

  // Counters since construction: cached blocks reused for other tokens.
  std::uint64_t evictions() const { return evictions_; }

  // The free list, the reference counts and the cache table agree; empty when all is well.
  // O(blocks): for tests.
  std::vector<std::string> check_invariants() const;

 private:
  enum class Content : std::uint8_t { kNone, kHashed, kPrivate };
  struct Block {
    std::uint64_t hash = 0;    // a kHashed block's
    std::uint32_t refs = 0;
    std::uint32_t stamp = 0;   // allocations of this block so far
    std::uint32_t freed = 0;   // ring position (mod 2^32) it was last freed at
    Content content = Content::kNone;
  };
  bool listed(std::uint32_t block, std::uint64_t position) const {
    return record(block).refs == 0 && record(block).freed == static_cast<std::uint32_t>(position);
  }
  void append(std::uint32_t block);
  void compact();
  // A ring of `size` entries holding the free list, in order, from position head_.
  void resize_ring(std::uint64_t size);

  std::uint32_t capacity_;
  // The records of the blocks allocated at least once (ids [0, allocated_)), in chunks of
  // kChunk: a pool grows without copying them, and from the allocator's recycled memory
  // (one array of them per pool was mapped and faulted in afresh at every scale-up).
  static constexpr std::uint32_t kChunkBits = 10, kChunk = 1u << kChunkBits;
  Block& record(std::uint32_t block) { return chunks_[block >> kChunkBits][block & (kChunk - 1)]; }
  const Block& record(std::uint32_t block) const { return chunks_[block >> kChunkBits][block & (kChunk - 1)]; }
  std::vector<std::unique_ptr<Block[]>> chunks_;
  std::uint32_t allocated_ = 0;
  // The free list: ring_[position & ring_mask_] for positions [head_, tail_).
  std::vector<std::uint32_t> ring_;
  std::uint64_t ring_mask_ = 0;
  std::uint64_t head_ = 0;
  std::uint64_t tail_ = 0;
  std::uint32_t free_count_ = 0;
  engine::FlatU64Map table_;  // hash -> block
  bool prefix_caching_;
  std::uint64_t evictions_ = 0;
};

}  // namespace meshsim::cluster
