#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace meshsim::cluster {

// An instance's KV cache as vLLM's v1 KV cache manager keeps it: a fixed number of blocks
// of `block_size` tokens, reference-counted (a block of a shared prefix is held by every
// request using it), and, with prefix caching, a table from the chained hash of a full
// block's tokens to the block holding them. A block nobody holds is free but keeps its
// contents, so a later request with the same prefix can take it back (a hit) until it is
// reused for something else (evicted). Free blocks are reused least recently freed first.
//
// Costs: allocate, touch, release and cache O(1) (a hash-table operation at most);
// lookup O(hashes looked up). Memory O(blocks).
class KvBlockPool {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  // `prefix_caching` false: freed blocks forget their contents (nothing is ever hit).
  KvBlockPool(std::uint32_t blocks, bool prefix_caching);

  std::uint32_t blocks() const { return static_cast<std::uint32_t>(blocks_.size()); }
  // Blocks nobody holds (cached or empty): what allocations can take.
  std::uint32_t free_blocks() const { return free_count_; }
  std::uint32_t used_blocks() const { return blocks() - free_count_; }
  bool prefix_caching() const { return prefix_caching_; }

  // The block holding the full block of tokens with this chained hash, if cached.
  std::uint32_t cached(std::uint64_t hash) const;
  bool held(std::uint32_t block) const { return blocks_[block].refs > 0; }
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

  // Counters since construction: cached blocks reused for other tokens.
  std::uint64_t evictions() const { return evictions_; }

  // The free list, the reference counts and the cache table agree; empty when all is well.
  // O(blocks): for tests.
  std::vector<std::string> check_invariants() const;

 private:
  struct Block {
    std::uint64_t hash = 0;
    bool has_hash = false;
    std::uint32_t refs = 0;
    std::uint32_t prev = kNone;  // free list links (least recently freed at head_)
    std::uint32_t next = kNone;
  };
  void unlink(std::uint32_t block);
  void append(std::uint32_t block);

  std::vector<Block> blocks_;
  std::unordered_map<std::uint64_t, std::uint32_t> table_;
  std::uint32_t head_ = kNone;
  std::uint32_t tail_ = kNone;
  std::uint32_t free_count_ = 0;
  bool prefix_caching_;
  std::uint64_t evictions_ = 0;
};

}  // namespace meshsim::cluster
