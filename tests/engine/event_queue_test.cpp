#include "sim/engine/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <vector>

#include "sim/engine/rng.hpp"

namespace meshsim::engine {
namespace {

TEST(EventQueueTest, PopsInTimeThenSequenceOrder) {
  EventQueue queue;
  queue.push(SimTime::from_us(30), nullptr, {1, 0});
  queue.push(SimTime::from_us(10), nullptr, {2, 0});
  queue.push(SimTime::from_us(30), nullptr, {3, 0});
  queue.push(SimTime::from_us(10), nullptr, {4, 0});
  queue.push(SimTime::from_us(20), nullptr, {5, 0});
  std::vector<std::uint64_t> order;
  while (!queue.empty()) order.push_back(queue.pop().payload.a);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{2, 4, 5, 1, 3}));
}

TEST(EventQueueTest, RankedEventsRunAfterTheFifoEventsOfTheirTimeInRankOrder) {
  EventQueue queue;
  queue.push_ranked(SimTime::from_us(10), 7, nullptr, {1, 0});
  queue.push(SimTime::from_us(10), nullptr, {2, 0});
  queue.push_ranked(SimTime::from_us(10), 3, nullptr, {3, 0});
  queue.push_ranked(SimTime::from_us(5), 9, nullptr, {4, 0});
  queue.push(SimTime::from_us(10), nullptr, {5, 0});  // pushed last, still before the ranked ones
  std::vector<std::uint64_t> order;
  while (!queue.empty()) order.push_back(queue.pop().payload.a);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{4, 2, 5, 3, 1}));
}

TEST(EventQueueTest, MatchesAReferenceOrderOnRandomInterleavings) {
  // Reference: sort by (time, insertion index), the order the queue promises.
  Rng rng(11);
  EventQueue queue;
  std::priority_queue<std::pair<std::int64_t, std::uint64_t>, std::vector<std::pair<std::int64_t, std::uint64_t>>,
                      std::greater<>>
      reference;
  std::uint64_t inserted = 0;
  std::int64_t now = 0;
  for (int round = 0; round < 20000; ++round) {
    if (rng.uniform() < 0.55 || queue.empty()) {
      // Few distinct times so that ties are common.
      const std::int64_t time = now + static_cast<std::int64_t>(rng.uniform_int(8));
      queue.push(SimTime::from_us(time), nullptr, {inserted, 0});
      reference.emplace(time, inserted);
      ++inserted;
    } else {
      const Event event = queue.pop();
      ASSERT_EQ(event.time.us(), reference.top().first);
      ASSERT_EQ(event.payload.a, reference.top().second);
      ASSERT_EQ(event.order, reference.top().second);
      now = event.time.us();
      reference.pop();
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
}

}  // namespace
}  // namespace meshsim::engine
