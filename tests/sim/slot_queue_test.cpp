#include "sim/batching/slot_queue.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>

namespace meshsim::cluster {
namespace {

// Random pushes and pops at both ends, clears and shrinks, against std::deque: the same
// contents in the same order after every operation (the ring wraps and grows often).
TEST(SlotQueueTest, BehavesLikeADequeUnderRandomOperations) {
  std::mt19937_64 rng(11);
  for (int run = 0; run < 50; ++run) {
    SlotQueue queue;
    std::deque<std::uint32_t> twin;
    std::uniform_int_distribution<int> op(0, 19);
    for (int step = 0; step < 2000; ++step) {
      const auto value = static_cast<std::uint32_t>(rng());
      const int o = op(rng);
      if (o < 6) {
        queue.push_back(value);
        twin.push_back(value);
      } else if (o < 9) {
        queue.push_front(value);
        twin.push_front(value);
      } else if (o < 14 && !twin.empty()) {
        queue.pop_front();
        twin.pop_front();
      } else if (o < 18 && !twin.empty()) {
        queue.pop_back();
        twin.pop_back();
      } else if (o == 18 && step % 7 == 0) {
        queue.clear();
        twin.clear();
        queue.shrink_to_fit();
      } else if (o == 19) {
        queue.shrink_to_fit();  // keeps a non-empty queue's contents
      }
      ASSERT_EQ(queue.size(), twin.size());
      ASSERT_EQ(queue.empty(), twin.empty());
      if (!twin.empty()) {
        ASSERT_EQ(queue.front(), twin.front());
        ASSERT_EQ(queue.back(), twin.back());
      }
      std::vector<std::uint32_t> contents;
      queue.append_to(contents);
      ASSERT_EQ(contents, std::vector<std::uint32_t>(twin.begin(), twin.end())) << "run " << run << " step " << step;
    }
  }
}

}  // namespace
}  // namespace meshsim::cluster
