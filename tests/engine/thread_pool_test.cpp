#include "sim/engine/thread_pool.hpp"

#include <gtest/gtest.h>

#include <numeric>
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
