#pragma once

#include <cstdint>
#include <vector>

#include "sim/batching/kv_cache.hpp"
#include "tests/sim/kv_block_pool.hpp"

namespace meshsim::cluster {

// KvCache block by block, as vLLM keeps it (chained block hashes in a table, a block
// table per request, reference counts): the slow twin KvSpanCache must agree with,
// hit for hit and eviction for eviction (kv_cache_test.cpp). A request's own blocks
// (from its first token no other request has) are not hashed: the table remembers them by
// the pool's stamps, and forgets them when closed.
class KvBlockCache final : public KvCache {
 public:
  KvBlockCache(std::uint32_t blocks, std::uint32_t block_size, bool prefix_caching);

  std::uint32_t blocks() const override { return pool_.blocks(); }
  std::uint32_t free_blocks() const override { return pool_.free_blocks(); }
  bool prefix_caching() const override { return pool_.prefix_caching(); }
  std::uint64_t evictions() const override { return pool_.evictions(); }

  std::uint32_t open(const TokenStream& stream) override;
  void close(std::uint32_t table) override;
  std::uint32_t table_blocks(std::uint32_t table) const override {
    return static_cast<std::uint32_t>(tables_[table].blocks.size());
  }
  Prefix find_prefix(std::uint32_t table, std::uint32_t lookable) override;
  void take_prefix(std::uint32_t table) override;
  void grow(std::uint32_t table, std::uint32_t blocks) override;
  void register_full(std::uint32_t table, std::uint32_t full_blocks) override;
  void release(std::uint32_t table) override;
  std::uint32_t cached_prefix_blocks(const TokenStream& stream, std::uint32_t lookable) const override;
  std::vector<std::string> check_invariants() const override;

  // For conformance tests: a table's blocks and how many of them are registered, the pool.
  const std::vector<std::uint32_t>& block_ids(std::uint32_t table) const { return tables_[table].blocks; }
  std::uint32_t registered_blocks(std::uint32_t table) const { return tables_[table].cached_blocks; }
  const KvBlockPool& pool() const { return pool_; }

 private:
  struct OwnBlock {
    std::uint32_t block = KvBlockPool::kNone;
    std::uint32_t stamp = 0;
  };
  // A stream's chained block hashes, computed on demand.
  struct Hashes {
    std::vector<TokenStream::Run> runs;
    std::vector<std::uint64_t> hashes;
    std::uint32_t first_private = KvBlockPool::kNone;
    std::uint64_t of(std::uint32_t index, std::uint32_t block_size);
  };
  struct Table {
    Hashes hashes;
    std::vector<std::uint32_t> blocks;
    std::uint32_t cached_blocks = 0;  // leading blocks registered
    std::vector<OwnBlock> own;        // its own blocks it registered, from its first private block on
    bool open = false;
  };
  static Hashes hashes_of(const TokenStream& stream, std::uint32_t block_size);
  std::uint32_t cached_block(Table& table, std::uint32_t index);

  KvBlockPool pool_;
  std::uint32_t block_size_;
  std::vector<Table> tables_;
  std::vector<std::uint32_t> hits_;
};

}  // namespace meshsim::cluster
