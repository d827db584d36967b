#include "tests/sim/kv_block_pool.hpp"

#include <string>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

KvBlockPool::KvBlockPool(std::uint32_t blocks, bool prefix_caching)
    : capacity_(blocks), ring_(16), ring_mask_(15), free_count_(blocks), prefix_caching_(prefix_caching) {}

void KvBlockPool::resize_ring(std::uint64_t size) {
  std::vector<std::uint32_t> ring(size);
  for (std::uint64_t p = head_; p < tail_; ++p) ring[p & (size - 1)] = ring_[p & ring_mask_];
  ring_ = std::move(ring);
  ring_mask_ = size - 1;
}

void KvBlockPool::append(std::uint32_t block) {
  if (tail_ - head_ == ring_.size()) compact();
  ring_[tail_ & ring_mask_] = block;
  record(block).freed = static_cast<std::uint32_t>(tail_);
  ++tail_;
  ++free_count_;
}

// Drops the stale entries, keeping the free blocks' order: at most `blocks` stay, so the
// next compaction is at least as many appends away.
void KvBlockPool::compact() {
  std::uint64_t kept = head_;
  for (std::uint64_t p = head_; p < tail_; ++p) {
    const std::uint32_t block = ring_[p & ring_mask_];
    if (!listed(block, p)) continue;
    ring_[kept & ring_mask_] = block;
    record(block).freed = static_cast<std::uint32_t>(kept);
    ++kept;
  }
  tail_ = kept;
}

std::uint32_t KvBlockPool::cached(std::uint64_t hash) const {
  return table_.find(hash);
}

void KvBlockPool::touch(std::uint32_t block) {
  // A free block's ring entry goes stale: it is no longer free.
  if (record(block).refs++ == 0) --free_count_;
}

std::uint32_t KvBlockPool::allocate() {
  MESHSIM_CHECK(free_count_ > 0, "allocate: no free KV block");
  if (allocated_ < capacity_) {
    // Never-allocated blocks come first: they were freed before anything else.
    const std::uint32_t block = allocated_++;
    if ((block & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<Block[]>(kChunk));
    record(block) = Block{.refs = 1, .stamp = 1};
    --free_count_;
    // The ring keeps room for twice the blocks in circulation.
    if (2 * allocated_ > ring_.size()) resize_ring(2 * ring_.size());
    return block;
  }
  // Allocations come in runs (a chunk's blocks): fetch the blocks a few entries ahead,
  // whose records and hashes would otherwise each be a cache miss.
  constexpr std::uint64_t kAhead = 8;
  if (tail_ - head_ > kAhead) {
    const std::uint32_t ahead = ring_[(head_ + kAhead) & ring_mask_];
    __builtin_prefetch(&record(ahead));
  }
  std::uint32_t block = ring_[head_ & ring_mask_];
  while (!listed(block, head_)) block = ring_[++head_ & ring_mask_];
  ++head_;
  --free_count_;
  Block& b = record(block);
  if (b.content == Content::kHashed) table_.erase(b.hash);
  evictions_ += b.content != Content::kNone;
  b.content = Content::kNone;
  ++b.stamp;
  b.refs = 1;
  return block;
}

void KvBlockPool::release(std::uint32_t block) {
  Block& b = record(block);
  MESHSIM_CHECK(b.refs > 0, "release: KV block " + std::to_string(block) + " is not held");
  if (--b.refs == 0) append(block);
}

void KvBlockPool::cache(std::uint32_t block, std::uint64_t hash) {
  Block& b = record(block);
  if (!prefix_caching_ || b.content != Content::kNone) return;
  if (table_.find(hash) != kNone) return;
  table_.insert(hash, block);
  b.hash = hash;
  b.content = Content::kHashed;
}

std::uint32_t KvBlockPool::keep_private(std::uint32_t block) {
  Block& b = record(block);
  if (prefix_caching_ && b.content == Content::kNone) b.content = Content::kPrivate;
  return b.stamp;
}

std::vector<std::uint32_t> KvBlockPool::free_queue() const {
  std::vector<std::uint32_t> queue;
  for (std::uint32_t block = allocated_; block < capacity_; ++block) queue.push_back(block);
  for (std::uint64_t p = head_; p < tail_; ++p) {
    if (listed(ring_[p & ring_mask_], p)) queue.push_back(ring_[p & ring_mask_]);
  }
  return queue;
}

std::vector<std::string> KvBlockPool::check_invariants() const {
  std::vector<std::string> problems;
  std::vector<std::uint32_t> listings(allocated_, 0);
  for (std::uint64_t p = head_; p < tail_; ++p) {
    const std::uint32_t block = ring_[p & ring_mask_];
    if (block >= allocated_) {
      problems.push_back("the free list names block " + std::to_string(block));
      continue;
    }
    listings[block] += listed(block, p);
  }
  if (tail_ - head_ > ring_.size()) problems.push_back("the free list overflows its ring");
  std::uint32_t unheld = 0, hashed = 0;
  for (std::uint32_t b = 0; b < allocated_; ++b) {
    const bool free = record(b).refs == 0;
    unheld += free;
    if (listings[b] != (free ? 1u : 0u)) problems.push_back("block " + std::to_string(b) + ": listed free " +
                                                            std::to_string(listings[b]) + " times");
    if (record(b).content != Content::kHashed) continue;
    ++hashed;
    if (cached(record(b).hash) != b) problems.push_back("block " + std::to_string(b) + ": not in the table");
  }
  if (unheld + (capacity_ - allocated_) != free_count_) {
    problems.push_back("blocks held by nobody are not all free");
  }
  if (hashed != table_.size()) {
    problems.push_back("the table lists blocks that do not hold its hashes");
  }
  return problems;
}

}  // namespace meshsim::cluster
