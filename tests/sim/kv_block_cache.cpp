#include "tests/sim/kv_block_cache.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "sim/engine/hash_combine.hpp"

namespace meshsim::cluster {

KvBlockCache::KvBlockCache(std::uint32_t blocks, std::uint32_t block_size, bool prefix_caching)
    : pool_(blocks, prefix_caching), block_size_(block_size) {}

KvBlockCache::Hashes KvBlockCache::hashes_of(const TokenStream& stream, std::uint32_t block_size) {
  Hashes h;
  stream.for_each_run([&](const TokenStream::Run& run) {
    if (run.own() && h.first_private == KvBlockPool::kNone) {
      h.first_private = static_cast<std::uint32_t>(run.begin / block_size);
    }
    h.runs.push_back(run);
    return true;
  });
  return h;
}

// vLLM's chained hash: a block's covers its tokens, run piece by run piece, and its parent's.
std::uint64_t KvBlockCache::Hashes::of(std::uint32_t index, std::uint32_t block_size) {
  while (hashes.size() <= index) {
    std::uint64_t h = hashes.empty() ? 0x6b76626c6f636b73ULL : hashes.back();
    const std::uint64_t from = std::uint64_t{block_size} * hashes.size(), to = from + block_size;
    for (const auto& run : runs) {
      const std::uint64_t at = std::max(from, run.begin), stop = std::min(to, run.end);
      if (at >= stop) continue;
      h = engine::hash_combine(engine::hash_combine(engine::hash_combine(engine::hash_combine(h, static_cast<std::uint64_t>(run.source)), run.id), run.offset + (at - run.begin)),
              stop - at);
    }
    hashes.push_back(h);
  }
  return hashes[index];
}

std::uint32_t KvBlockCache::open(const TokenStream& stream) {
  tables_.emplace_back();
  tables_.back().hashes = hashes_of(stream, block_size_);
  tables_.back().open = true;
  return static_cast<std::uint32_t>(tables_.size() - 1);
}

void KvBlockCache::close(std::uint32_t table) {
  release(table);
  tables_[table] = Table{};
}

std::uint32_t KvBlockCache::cached_block(Table& table, std::uint32_t index) {
  const std::uint32_t first_private = table.hashes.first_private;
  if (index < first_private) return pool_.cached(table.hashes.of(index, block_size_));
  const std::uint32_t own = index - first_private;
  if (own < table.own.size() && pool_.holds_private(table.own[own].block, table.own[own].stamp)) {
    return table.own[own].block;
  }
  return KvBlockPool::kNone;
}

KvCache::Prefix KvBlockCache::find_prefix(std::uint32_t id, std::uint32_t lookable) {
  hits_.clear();
  Prefix prefix;
  if (!pool_.prefix_caching()) return prefix;
  for (std::uint32_t b = 0; b < lookable; ++b) {
    const std::uint32_t block = cached_block(tables_[id], b);
    if (block == KvBlockPool::kNone) break;
    hits_.push_back(block);
    prefix.free += !pool_.held(block);
  }
  prefix.blocks = static_cast<std::uint32_t>(hits_.size());
  return prefix;
}

void KvBlockCache::take_prefix(std::uint32_t id) {
  Table& table = tables_[id];
  for (const std::uint32_t block : hits_) {
    pool_.touch(block);
    table.blocks.push_back(block);
  }
  table.cached_blocks += static_cast<std::uint32_t>(hits_.size());
  hits_.clear();
}

void KvBlockCache::grow(std::uint32_t id, std::uint32_t blocks) {
  for (std::uint32_t i = 0; i < blocks; ++i) tables_[id].blocks.push_back(pool_.allocate());
}

void KvBlockCache::register_full(std::uint32_t id, std::uint32_t full_blocks) {
  if (!pool_.prefix_caching()) return;
  Table& table = tables_[id];
  const std::uint32_t first_private = table.hashes.first_private;
  for (; table.cached_blocks < full_blocks; ++table.cached_blocks) {
    const std::uint32_t index = table.cached_blocks;
    const std::uint32_t block = table.blocks[index];
    if (index < first_private) {
      pool_.cache(block, table.hashes.of(index, block_size_));
      continue;
    }
    if (cached_block(table, index) != KvBlockPool::kNone) continue;  // the first copy stays
    const std::uint32_t own = index - first_private;
    if (own == table.own.size()) table.own.emplace_back();
    table.own[own] = OwnBlock{block, pool_.keep_private(block)};
  }
}

void KvBlockCache::release(std::uint32_t id) {
  Table& table = tables_[id];
  for (auto it = table.blocks.rbegin(); it != table.blocks.rend(); ++it) pool_.release(*it);
  table.blocks.clear();
  table.cached_blocks = 0;
}

std::uint32_t KvBlockCache::cached_prefix_blocks(const TokenStream& stream, std::uint32_t lookable) const {
  if (!pool_.prefix_caching()) return 0;
  Hashes hashes = hashes_of(stream, block_size_);
  lookable = std::min(lookable, hashes.first_private);
  std::uint32_t b = 0;
  while (b < lookable && pool_.cached(hashes.of(b, block_size_)) != KvBlockPool::kNone) ++b;
  return b;
}

std::vector<std::string> KvBlockCache::check_invariants() const {
  std::vector<std::string> problems = pool_.check_invariants();
  std::unordered_map<std::uint32_t, std::uint32_t> refs;
  for (const Table& table : tables_) {
    for (const std::uint32_t block : table.blocks) ++refs[block];
  }
  for (const auto& [block, count] : refs) {
    if (!pool_.held(block)) problems.push_back("block " + std::to_string(block) + " is in a table but free");
  }
  if (pool_.used_blocks() != refs.size()) problems.push_back("blocks held by no request");
  return problems;
}

}  // namespace meshsim::cluster
