#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace meshsim::scheduler {

// The priority buckets of one victim class, ordered by priority, each node carrying its
// subtree's task count, lowest and highest priority, latest deadline still ahead and
// (a bound on) lowest task sequence. Counting the tasks below a priority bound is O(log buckets), and
// a subtree's best possible preempt_score follows from its aggregates, so the victim
// index walks buckets best-first without visiting the rest. Tasks usually share a few
// priority tiers, so a class has few buckets and the tree is shallow; with distinct
// priorities it degrades gracefully to one task per bucket. A treap: random heap
// priorities keep it balanced in expectation; nodes live in one vector.
class BucketTreap {
 public:
  static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
  static constexpr double kNone = -std::numeric_limits<double>::infinity();

  // One bucket's summary (priorities are unique keys).
  struct Entry {
    double priority = 0.0;
    double latest_deadline = kNone;  // of its tasks not yet past their deadline
    // kappa * latest_deadline - priority: the bucket's best score less the incoming
    // priority and kappa * now, while a deadline is ahead (kNone otherwise).
    double lead = kNone;
    // At most its lowest task sequence: a cursor breaks ties of a bound by it, to expand
    // the bound first, and a lower value still does.
    std::uint64_t min_seq = 0;
    std::uint32_t tasks = 0;
  };
  struct Aggregate {
    double min_priority = 0.0, max_priority = 0.0;
    double latest_deadline = kNone;
    double lead = kNone;
    std::uint64_t min_seq = 0;
    std::uint32_t tasks = 0;
  };

  // Adds or replaces the bucket of entry.priority.
  void upsert(const Entry& entry);
  void erase(double priority);
  void clear();

  std::uint32_t root() const { return root_; }
  std::uint32_t left(std::uint32_t n) const { return nodes_[n].left; }
  std::uint32_t right(std::uint32_t n) const { return nodes_[n].right; }
  const Entry& entry(std::uint32_t n) const { return nodes_[n].entry; }
  const Aggregate& aggregate(std::uint32_t n) const { return nodes_[n].agg; }
  static Aggregate single(const Entry& entry);

  // The aggregate of the buckets for which `in_prefix(priority)` holds (a prefix of
  // ascending priorities); tasks == 0 when none.
  template <typename Pred>
  Aggregate aggregate_prefix(Pred in_prefix) const {
    Aggregate agg;
    if (root_ == kNil) return agg;
    if (in_prefix(nodes_[root_].agg.max_priority)) return nodes_[root_].agg;  // all of it
    for (std::uint32_t n = root_; n != kNil;) {
      if (in_prefix(nodes_[n].entry.priority)) {
        if (nodes_[n].left != kNil) add(agg, nodes_[nodes_[n].left].agg);
        add(agg, single(nodes_[n].entry));
        n = nodes_[n].right;
      } else {
        n = nodes_[n].left;
      }
    }
    return agg;
  }
  // Calls whole(subtree) and one(node) for a minimal cover of the prefix.
  template <typename Pred, typename Whole, typename One>
  void cover_prefix(Pred in_prefix, Whole whole, One one) const {
    for (std::uint32_t n = root_; n != kNil;) {
      if (in_prefix(nodes_[n].entry.priority)) {
        if (nodes_[n].left != kNil) whole(nodes_[n].left);
        one(n);
        n = nodes_[n].right;
      } else {
        n = nodes_[n].left;
      }
    }
  }
  // Calls visit(entry) for each bucket inside `outer` but not `inner` (both prefixes).
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

  static void add(Aggregate& agg, const Aggregate& other);
  void pull(std::uint32_t n);
  // Splits `t` into priorities < `priority` and >= it.
  void split(std::uint32_t t, double priority, std::uint32_t& lo, std::uint32_t& hi);
  std::uint32_t merge(std::uint32_t a, std::uint32_t b);
  std::uint32_t next_heap();

  template <typename Outer, typename Inner, typename Visit>
  void between(std::uint32_t n, Outer& outer, Inner& inner, Visit& visit) const {
    if (n == kNil) return;
    const double priority = nodes_[n].entry.priority;
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
  std::vector<std::uint32_t> path_;  // upsert's walk down, kept to spare an allocation per call
  std::uint32_t root_ = kNil;
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace meshsim::scheduler
