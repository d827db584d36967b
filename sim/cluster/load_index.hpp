#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

// The instance with the smallest load among a pool, kept in an indexed binary min-heap so
// that a routing decision is O(1) and a load change O(log n): no scan of the pool per
// request, and (unlike an ordered set) no allocation per change, which a replay makes for
// every arrival, step and departure. Ties go to the lowest member index: the heap orders
// by (load, member), a total order, so its top is the one an ordered set's first would be.
class LoadIndex {
 public:
  // Adds `member` with `load`, or updates it if present.
  void add(std::uint32_t member, std::int64_t load) {
    if (member >= slot_.size()) slot_.resize(member + 1, kAbsent);
    if (slot_[member] != kAbsent) {
      update(member, load);
      return;
    }
    slot_[member] = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back({load, member});
    sift_up(slot_[member]);
  }
  // Takes `member` out (an instance that stops taking requests); no-op if absent.
  void remove(std::uint32_t member) {
    if (!contains(member)) return;
    const std::uint32_t at = slot_[member];
    slot_[member] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;  // it was the last entry
    place(at, last);
    sift_up(at);
    sift_down(slot_[last.member]);
  }
  bool contains(std::uint32_t member) const { return member < slot_.size() && slot_[member] != kAbsent; }
  // The load `member` is indexed by (a member's).
  std::int64_t load_of(std::uint32_t member) const {
    MESHSIM_CHECK(contains(member), "LoadIndex::load_of: member " + std::to_string(member) + " is not indexed");
    return heap_[slot_[member]].load;
  }
  // A member's new load; no-op for a member not indexed.
  void update(std::uint32_t member, std::int64_t load) {
    if (!contains(member)) return;
    const std::uint32_t at = slot_[member];
    const std::int64_t before = heap_[at].load;
    if (before == load) return;
    heap_[at].load = load;
    if (load < before) {
      sift_up(at);
    } else {
      sift_down(at);
    }
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // Precondition: not empty (a pool with no member to route to is the caller's to handle).
  std::uint32_t least() const {
    MESHSIM_CHECK(!heap_.empty(), "LoadIndex::least: the pool has no member to route to");
    return heap_.front().member;
  }

 private:
  struct Entry {
    std::int64_t load;
    std::uint32_t member;
    bool operator<(const Entry& o) const { return load != o.load ? load < o.load : member < o.member; }
  };
  static constexpr std::uint32_t kAbsent = UINT32_MAX;

  void place(std::uint32_t at, const Entry& e) {
    heap_[at] = e;
    slot_[e.member] = at;
  }
  void sift_up(std::uint32_t at) {
    const Entry e = heap_[at];
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (!(e < heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, e);
  }
  void sift_down(std::uint32_t at) {
    const Entry e = heap_[at];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < e)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, e);
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> slot_;  // by member: its place in heap_, or kAbsent
};

}  // namespace meshsim::cluster
