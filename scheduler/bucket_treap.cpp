#include "scheduler/bucket_treap.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::scheduler {

BucketTreap::Aggregate BucketTreap::single(const Entry& entry) {
  return Aggregate{entry.priority, entry.priority, entry.latest_deadline, entry.lead, entry.min_seq, entry.tasks};
}

void BucketTreap::add(Aggregate& agg, const Aggregate& other) {
  if (agg.tasks == 0) {
    agg = other;
    return;
  }
  agg.min_priority = std::min(agg.min_priority, other.min_priority);
  agg.max_priority = std::max(agg.max_priority, other.max_priority);
  agg.latest_deadline = std::max(agg.latest_deadline, other.latest_deadline);
  agg.lead = std::max(agg.lead, other.lead);
  agg.min_seq = std::min(agg.min_seq, other.min_seq);
  agg.tasks += other.tasks;
}

void BucketTreap::pull(std::uint32_t n) {
  Node& node = nodes_[n];
  node.agg = single(node.entry);
  if (node.left != kNil) add(node.agg, nodes_[node.left].agg);
  if (node.right != kNil) add(node.agg, nodes_[node.right].agg);
}

std::uint32_t BucketTreap::next_heap() {
  // xorshift64: deterministic, so the same updates always build the same tree.
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return static_cast<std::uint32_t>(rng_ >> 32);
}

void BucketTreap::split(std::uint32_t t, double priority, std::uint32_t& lo, std::uint32_t& hi) {
  if (t == kNil) {
    lo = hi = kNil;
    return;
  }
  if (nodes_[t].entry.priority < priority) {
    split(nodes_[t].right, priority, nodes_[t].right, hi);
    lo = t;
  } else {
    split(nodes_[t].left, priority, lo, nodes_[t].left);
    hi = t;
  }
  pull(t);
}

std::uint32_t BucketTreap::merge(std::uint32_t a, std::uint32_t b) {
  if (a == kNil) return b;
  if (b == kNil) return a;
  if (nodes_[a].heap > nodes_[b].heap) {
    nodes_[a].right = merge(nodes_[a].right, b);
    pull(a);
    return a;
  }
  nodes_[b].left = merge(a, nodes_[b].left);
  pull(b);
  return b;
}

void BucketTreap::erase(double priority) {
  std::uint32_t lo, rest, mid, hi;
  split(root_, priority, lo, rest);
  // `rest` starts with the bucket if it is stored; split it off by the next priority up.
  split(rest, std::nextafter(priority, std::numeric_limits<double>::infinity()), mid, hi);
  if (mid != kNil) free_.push_back(mid);  // a single node: priorities are unique
  root_ = merge(lo, hi);
}

void BucketTreap::upsert(const Entry& entry) {
  // A stored bucket changes in place, its ancestors' aggregates pulled again: every task
  // that starts or stops updates its bucket, and cutting the tree apart and joining it
  // again cost five walks down it.
  path_.clear();
  for (std::uint32_t n = root_; n != kNil;) {
    path_.push_back(n);
    const double priority = nodes_[n].entry.priority;
    if (entry.priority == priority) {
      nodes_[n].entry = entry;
      for (auto it = path_.rbegin(); it != path_.rend(); ++it) pull(*it);
      return;
    }
    n = entry.priority < priority ? nodes_[n].left : nodes_[n].right;
  }
  std::uint32_t n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[n] = Node{entry, {}, kNil, kNil, next_heap()};
  pull(n);
  std::uint32_t lo, hi;
  split(root_, entry.priority, lo, hi);
  root_ = merge(merge(lo, n), hi);
}

void BucketTreap::clear() {
  nodes_.clear();
  free_.clear();
  root_ = kNil;
}

}  // namespace meshsim::scheduler
