#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/sim_time.hpp"

namespace meshsim::engine {

// Plain data carried by an event to its handler: two integers whose meaning is the
// handler's (an instance index and a request id, a timer generation, ...). Keeping
// payloads as values means no allocation per event.
struct EventPayload {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

// Anything that receives events. Handlers outlive the events addressed to them.
class EventHandler {
 public:
  virtual void on_event(const EventPayload& payload) = 0;

 protected:
  ~EventHandler() = default;
};

struct Event {
  SimTime time;
  // Breaks ties between equal times: the insertion sequence for FIFO events (below
  // kRankedOrder), kRankedOrder + rank for ranked ones (see EventQueue::push_ranked).
  std::uint64_t order = 0;
  EventHandler* target = nullptr;
  EventPayload payload;
};

// Pending events in a vector-backed binary min-heap ordered by (time, order): events at
// equal times pop in the order they were pushed, except ranked events, which pop after
// every FIFO event of their time, by rank. Every run is deterministic. Costs: push
// O(log n), pop O(log n), top O(1), no allocation once the vector has grown (call
// reserve to avoid even that). Cancellation is not a queue
// operation: it is lazy, by generation check, in Timer (see timer.hpp).
class EventQueue {
 public:
  void reserve(std::size_t capacity) { heap_.reserve(capacity); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  static constexpr std::uint64_t kRankedOrder = std::uint64_t{1} << 63;

  // Assigns the next insertion sequence number to the event.
  void push(SimTime time, EventHandler* target, EventPayload payload) {
    push_ordered(Event{time, next_sequence_++, target, payload});
  }
  // An event whose place among equal times is its rank, not when it was pushed: for
  // handlers whose relative order must not depend on how often they were re-armed (two
  // instances ending iterations at the same microsecond). Ranks of live events at one
  // time should differ; equal ranks pop in an unspecified order.
  void push_ranked(SimTime time, std::uint32_t rank, EventHandler* target, EventPayload payload) {
    push_ordered(Event{time, kRankedOrder + rank, target, payload});
  }

  // Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event earliest = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return earliest;
  }

 private:
  static bool before(const Event& x, const Event& y) {
    return x.time < y.time || (x.time == y.time && x.order < y.order);
  }

  void push_ordered(const Event& event) {
    heap_.push_back(event);
    sift_up(heap_.size() - 1);
  }

  // Both sifts move a hole instead of swapping, so each level costs one copy.
  void sift_up(std::size_t index) {
    Event moving = heap_[index];
    while (index > 0) {
      const std::size_t parent = (index - 1) / 2;
      if (!before(moving, heap_[parent])) break;
      heap_[index] = heap_[parent];
      index = parent;
    }
    heap_[index] = moving;
  }

  // Places `moving` starting from the root hole.
  void sift_down(const Event& moving) {
    const std::size_t n = heap_.size();
    std::size_t index = 0;
    for (;;) {
      std::size_t child = 2 * index + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], moving)) break;
      heap_[index] = heap_[child];
      index = child;
    }
    heap_[index] = moving;
  }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace meshsim::engine
