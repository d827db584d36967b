#include "sim/cluster/kv_block_pool.hpp"

#include <string>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

KvBlockPool::KvBlockPool(std::uint32_t blocks, bool prefix_caching)
    : blocks_(blocks), prefix_caching_(prefix_caching) {
  for (std::uint32_t b = 0; b < blocks; ++b) append(b);
}

std::uint32_t KvBlockPool::cached(std::uint64_t hash) const {
  const auto it = table_.find(hash);
  return it == table_.end() ? kNone : it->second;
}

void KvBlockPool::unlink(std::uint32_t block) {
  Block& b = blocks_[block];
  (b.prev == kNone ? head_ : blocks_[b.prev].next) = b.next;
  (b.next == kNone ? tail_ : blocks_[b.next].prev) = b.prev;
  b.prev = b.next = kNone;
  --free_count_;
}

void KvBlockPool::append(std::uint32_t block) {
  Block& b = blocks_[block];
  b.prev = tail_;
  b.next = kNone;
  (tail_ == kNone ? head_ : blocks_[tail_].next) = block;
  tail_ = block;
  ++free_count_;
}

void KvBlockPool::touch(std::uint32_t block) {
  Block& b = blocks_[block];
  if (b.refs++ == 0) unlink(block);
}

std::uint32_t KvBlockPool::allocate() {
  MESHSIM_CHECK(head_ != kNone, "allocate: no free KV block");
  const std::uint32_t block = head_;
  unlink(block);
  Block& b = blocks_[block];
  if (b.has_hash) {
    table_.erase(b.hash);
    b.has_hash = false;
    ++evictions_;
  }
  b.refs = 1;
  return block;
}

void KvBlockPool::release(std::uint32_t block) {
  Block& b = blocks_[block];
  MESHSIM_CHECK(b.refs > 0, "release: KV block " + std::to_string(block) + " is not held");
  if (--b.refs > 0) return;
  if (!prefix_caching_ && b.has_hash) {
    table_.erase(b.hash);
    b.has_hash = false;
  }
  append(block);
}

void KvBlockPool::cache(std::uint32_t block, std::uint64_t hash) {
  Block& b = blocks_[block];
  if (!prefix_caching_ || b.has_hash) return;
  if (table_.emplace(hash, block).second) {
    b.hash = hash;
    b.has_hash = true;
  }
}

std::vector<std::string> KvBlockPool::check_invariants() const {
  std::vector<std::string> problems;
  std::uint32_t listed = 0;
  std::uint32_t previous = kNone;
  for (std::uint32_t b = head_; b != kNone; b = blocks_[b].next) {
    if (blocks_[b].refs != 0) problems.push_back("block " + std::to_string(b) + " is free and held");
    if (blocks_[b].prev != previous) problems.push_back("block " + std::to_string(b) + ": broken free-list link");
    previous = b;
    if (++listed > blocks_.size()) {
      problems.push_back("the free list loops");
      break;
    }
  }
  if (listed != free_count_) problems.push_back("free count disagrees with the free list");
  std::uint32_t unheld = 0, hashed = 0;
  for (std::uint32_t b = 0; b < blocks_.size(); ++b) {
    unheld += blocks_[b].refs == 0;
    if (!blocks_[b].has_hash) continue;
    ++hashed;
    const auto it = table_.find(blocks_[b].hash);
    if (it == table_.end() || it->second != b) problems.push_back("block " + std::to_string(b) + ": not in the table");
  }
  if (unheld != free_count_) problems.push_back("blocks held by nobody are not all free");
  if (hashed != table_.size()) problems.push_back("the table lists blocks that do not hold its hashes");
  return problems;
}

}  // namespace meshsim::cluster
