#include "sim/engine/thread_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <stdexcept>
#include <string>

namespace meshsim::engine {
namespace {

TEST(ThreadPoolTest, RunsEveryIndexExactlyOnceOverManyRounds) {
  for (const unsigned threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (const std::size_t n : {0u, 1u, 2u, 7u, 1000u}) {
      std::vector<int> hits(n, 0);
      // Many short rounds: the hand-over between rounds is where a pool goes wrong.
      for (int round = 0; round < 300; ++round) pool.for_each(n, [&](std::size_t i) { ++hits[i]; });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 300) << "threads " << threads << " n " << n << " i " << i;
    }
  }
}

// Past the wrap of the round counter (2^16 rounds), and pools destroyed while their
// threads spin, sleep or are about to join a round: every index still runs once and
// every pool ends (a lost wake-up hangs here).
TEST(ThreadPoolTest, RoundsPastTheCounterWrapAndPoolsEndingAtAnyMoment) {
  ThreadPool pool(2);
  std::vector<int> hits(3, 0);
  constexpr int kRounds = 70'000;
  for (int round = 0; round < kRounds; ++round) pool.for_each(hits.size(), [&](std::size_t i) { ++hits[i]; });
  for (const int h : hits) EXPECT_EQ(h, kRounds);
  for (int trial = 0; trial < 200; ++trial) {
    ThreadPool brief(trial % 3 + 2);
    int sum = 0;
    std::vector<int> mine(5, 0);
    for (int round = 0; round < trial % 4; ++round) brief.for_each(mine.size(), [&](std::size_t i) { ++mine[i]; });
    if (trial % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let them sleep
    for (const int h : mine) sum += h;
    EXPECT_EQ(sum, 5 * (trial % 4));
  }
}

TEST(ThreadPoolTest, RethrowsTheLowestIndexErrorAfterEveryIndexRan) {
  ThreadPool pool(3);
  std::vector<int> ran(64, 0);
  try {
    pool.for_each(ran.size(), [&](std::size_t i) {
      ran[i] = 1;
      if (i % 10 == 5) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 5");
  }
  EXPECT_EQ(std::accumulate(ran.begin(), ran.end(), 0), 64);
  // The pool is usable after an error.
  int sum = 0;
  pool.for_each(1, [&](std::size_t) { sum = 7; });
  EXPECT_EQ(sum, 7);
}

}  // namespace
}  // namespace meshsim::engine
