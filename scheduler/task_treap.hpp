#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "scheduler/preemption_rules.hpp"

namespace meshsim::scheduler {

// An ordered set of running tasks keyed by (priority, sequence), each node carrying the
// maxima of its subtree's score terms (see preempt_score), so that one can count the
// tasks below a priority bound in O(log n) and walk tasks in score order from whole
// subtrees' exact bounds. A treap: random heap priorities keep it balanced in
// expectation; nodes live in one vector and are linked by index.
class TaskTreap {
 public:
  static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();

  struct Entry {
    ScoreTerms terms;
    std::uint64_t seq = 0;  // registration order: ties go to the older task
  };
  // The subtree's aggregates; each *_seq is the lowest sequence attaining the extreme.
  struct Aggregate {
    ScoreTerms terms;  // max kappa_deadline, max kappa_deadline_minus_priority, min priority
    double max_priority = 0.0;
    std::uint64_t seq_kdp = 0, seq_priority = 0, seq_kd = 0, min_seq = 0;
    std::uint32_t size = 0;
  };

  void insert(const Entry& entry);
  // Returns false when no such entry is stored.
  bool erase(double priority, std::uint64_t seq);
  std::uint32_t size() const { return root_ == kNil ? 0 : nodes_[root_].agg.size; }
  void clear();

  std::uint32_t root() const { return root_; }
  std::uint32_t left(std::uint32_t n) const { return nodes_[n].left; }
  std::uint32_t right(std::uint32_t n) const { return nodes_[n].right; }
  const Entry& entry(std::uint32_t n) const { return nodes_[n].entry; }
  const Aggregate& aggregate(std::uint32_t n) const { return nodes_[n].agg; }
  // The aggregate of one node alone, and of two disjoint sets.
  static Aggregate single(const Entry& entry);
  static void combine(Aggregate& into, const Aggregate& other);

  // Number of entries for which `in_prefix(priority)` holds; it must hold for a prefix of
  // ascending priorities.
  template <typename Pred>
  std::uint32_t count_prefix(Pred in_prefix) const {
    if (root_ != kNil && in_prefix(nodes_[root_].agg.max_priority)) return size();  // all of it
    std::uint32_t count = 0;
    for (std::uint32_t n = root_; n != kNil;) {
      if (in_prefix(nodes_[n].entry.terms.priority)) {
        count += size_of(nodes_[n].left) + 1;
        n = nodes_[n].right;
      } else {
        n = nodes_[n].left;
      }
    }
    return count;
  }
  // Calls whole(subtree) and one(node) for a minimal cover of the prefix.
  template <typename Pred, typename Whole, typename One>
  void cover_prefix(Pred in_prefix, Whole whole, One one) const {
    for (std::uint32_t n = root_; n != kNil;) {
      if (in_prefix(nodes_[n].entry.terms.priority)) {
        if (nodes_[n].left != kNil) whole(nodes_[n].left);
        one(n);
        n = nodes_[n].right;
      } else {
        n = nodes_[n].left;
      }
    }
  }
  // Calls visit(entry) for each entry inside `outer` but not `inner` (both prefixes,
  // inner within outer), in priority order.
  template <typename Outer, typename Inner, typename Visit>
  void for_each_between(Outer outer, Inner inner, Visit visit) const {
    between(root_, outer, inner, visit);
  }

 private:
  struct Node {
    Entry entry;
    Aggregate agg;
    std::uint32_t left = kNil, right = kNil;
    std::uint32_t heap = 0;
  };

  std::uint32_t size_of(std::uint32_t n) const { return n == kNil ? 0 : nodes_[n].agg.size; }
  void pull(std::uint32_t n);
  // Splits `t` into keys < (priority, seq) and keys >= it.
  void split(std::uint32_t t, double priority, std::uint64_t seq, std::uint32_t& lo, std::uint32_t& hi);
  std::uint32_t merge(std::uint32_t a, std::uint32_t b);
  std::uint32_t next_heap();

  template <typename Outer, typename Inner, typename Visit>
  void between(std::uint32_t n, Outer& outer, Inner& inner, Visit& visit) const {
    if (n == kNil) return;
    const double priority = nodes_[n].entry.terms.priority;
    if (!outer(priority)) {
      between(nodes_[n].left, outer, inner, visit);
    } else if (inner(priority)) {
      between(nodes_[n].right, outer, inner, visit);
    } else {
      between(nodes_[n].left, outer, inner, visit);
      visit(nodes_[n].entry);
      between(nodes_[n].right, outer, inner, visit);
    }
  }

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;
  std::uint32_t root_ = kNil;
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace meshsim::scheduler
