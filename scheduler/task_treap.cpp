#include "scheduler/task_treap.hpp"

#include <algorithm>

namespace meshsim::scheduler {
namespace {

bool key_less(double p1, std::uint64_t s1, double p2, std::uint64_t s2) { return p1 < p2 || (p1 == p2 && s1 < s2); }

// The larger value, and on a tie the lower sequence.
void keep_max(double& value, std::uint64_t& seq, double other, std::uint64_t other_seq) {
  if (other > value || (other == value && other_seq < seq)) {
    value = other;
    seq = other_seq;
  }
}

}  // namespace

TaskTreap::Aggregate TaskTreap::single(const Entry& entry) {
  Aggregate agg;
  agg.terms = entry.terms;
  agg.max_priority = entry.terms.priority;
  agg.seq_kdp = agg.seq_priority = agg.seq_kd = agg.min_seq = entry.seq;
  agg.size = 1;
  return agg;
}

void TaskTreap::combine(Aggregate& agg, const Aggregate& c) {
  keep_max(agg.terms.kappa_deadline_minus_priority, agg.seq_kdp, c.terms.kappa_deadline_minus_priority, c.seq_kdp);
  keep_max(agg.terms.kappa_deadline, agg.seq_kd, c.terms.kappa_deadline, c.seq_kd);
  if (c.terms.priority < agg.terms.priority || (c.terms.priority == agg.terms.priority && c.seq_priority < agg.seq_priority)) {
    agg.terms.priority = c.terms.priority;
    agg.seq_priority = c.seq_priority;
  }
  agg.max_priority = std::max(agg.max_priority, c.max_priority);
  agg.min_seq = std::min(agg.min_seq, c.min_seq);
  agg.size += c.size;
}

void TaskTreap::pull(std::uint32_t n) {
  Node& node = nodes_[n];
  Aggregate agg = single(node.entry);
  for (const std::uint32_t child : {node.left, node.right}) {
    if (child != kNil) combine(agg, nodes_[child].agg);
  }
  node.agg = agg;
}

std::uint32_t TaskTreap::next_heap() {
  // xorshift64: deterministic, so the same inserts always build the same tree.
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return static_cast<std::uint32_t>(rng_ >> 32);
}

void TaskTreap::split(std::uint32_t t, double priority, std::uint64_t seq, std::uint32_t& lo, std::uint32_t& hi) {
  if (t == kNil) {
    lo = hi = kNil;
    return;
  }
  Node& node = nodes_[t];
  if (key_less(node.entry.terms.priority, node.entry.seq, priority, seq)) {
    split(node.right, priority, seq, nodes_[t].right, hi);
    lo = t;
  } else {
    split(node.left, priority, seq, lo, nodes_[t].left);
    hi = t;
  }
  pull(t);
}

std::uint32_t TaskTreap::merge(std::uint32_t a, std::uint32_t b) {
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

void TaskTreap::insert(const Entry& entry) {
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
  split(root_, entry.terms.priority, entry.seq, lo, hi);
  root_ = merge(merge(lo, n), hi);
}

bool TaskTreap::erase(double priority, std::uint64_t seq) {
  std::uint32_t lo, rest;
  split(root_, priority, seq, lo, rest);
  // The first node of `rest` is the entry if it is stored.
  std::uint32_t mid, hi;
  split(rest, priority, seq + 1, mid, hi);
  const bool found = mid != kNil;
  if (found) free_.push_back(mid);  // `mid` is a single node: keys are unique
  root_ = merge(lo, hi);
  return found;
}

void TaskTreap::clear() {
  nodes_.clear();
  free_.clear();
  root_ = kNil;
}

}  // namespace meshsim::scheduler
