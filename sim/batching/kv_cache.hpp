#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/batching/token_stream.hpp"

namespace meshsim::cluster {

// An instance's KV cache as vLLM's v1 KV cache manager keeps it, seen by the scheduler:
// a fixed number of blocks of `block_size` tokens; each request holds a table of blocks
// for its leading tokens; with prefix caching, a full block is registered under its
// tokens (and, as with vLLM's chained block hashes, every token before them), so a later
// request with the same prefix can take it (a hit) instead of computing it. A block
// nobody holds is free but keeps its contents until it is reused for other tokens
// (evicted); free blocks are reused least recently freed first, blocks never used before
// all others, and a request's blocks are freed last first (so a prefix's tail is evicted
// before its head).
//
// Simplified against vLLM: a full block whose tokens are already registered stays
// unregistered (vLLM registers both copies and hits the first), so every prefix has at
// most one copy to hit. A request's own tokens (everything from its first token no other
// request has) can be hit only by that request while it stays on the instance (after a
// preemption); nothing else ever could.
//
// KvSpanCache is the implementation, in spans of blocks; tests hold a slow twin in blocks.
class KvCache {
 public:
  virtual ~KvCache() = default;

  virtual std::uint32_t blocks() const = 0;
  // Blocks nobody holds (cached or empty): what allocations can take.
  virtual std::uint32_t free_blocks() const = 0;
  std::uint32_t used_blocks() const { return blocks() - free_blocks(); }
  virtual bool prefix_caching() const = 0;
  // Registered blocks reused for other tokens since construction.
  virtual std::uint64_t evictions() const = 0;

  // A request's block table, empty: opened when it joins the instance, closed (its blocks
  // released) when it leaves. `stream` must outlive it.
  virtual std::uint32_t open(const TokenStream& stream) = 0;
  virtual void close(std::uint32_t table) = 0;
  virtual std::uint32_t table_blocks(std::uint32_t table) const = 0;

  struct Prefix {
    std::uint32_t blocks = 0;  // leading blocks of the request's tokens registered here
    std::uint32_t free = 0;    // of them, free now (taking them takes free blocks)
  };
  // The longest registered prefix of an empty table's tokens, at most `lookable` blocks.
  virtual Prefix find_prefix(std::uint32_t table, std::uint32_t lookable) = 0;
  // The table takes the blocks the last find_prefix (for it, with nothing changed since)
  // found.
  virtual void take_prefix(std::uint32_t table) = 0;
  // `blocks` blocks for new tokens at the table's end. Precondition: that many are free.
  virtual void grow(std::uint32_t table, std::uint32_t blocks) = 0;
  // The table's first `full_blocks` blocks hold all their tokens: they are registered
  // (with prefix caching).
  virtual void register_full(std::uint32_t table, std::uint32_t full_blocks) = 0;
  // Releases every block of the table, last first; the table stays open, empty.
  virtual void release(std::uint32_t table) = 0;
  // Leading blocks of a request not on this instance registered here, at most `lookable`
  // (blocks of its own tokens are not looked up: it has none here).
  virtual std::uint32_t cached_prefix_blocks(const TokenStream& stream, std::uint32_t lookable) const = 0;

  // Tables, reference counts, the free list and the registry agree; empty when all is
  // well. O(blocks or spans): for tests.
  virtual std::vector<std::string> check_invariants() const = 0;
};

}  // namespace meshsim::cluster
