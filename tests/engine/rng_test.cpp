#include "sim/engine/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

namespace meshsim::engine {
namespace {

TEST(RngTest, SameSeedSameNumbersDifferentSeedDifferentNumbers) {
  Rng a(5);
  Rng b(5);
  Rng c(6);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
  }
}

TEST(RngTest, KnownValuesPinTheGeneratorAcrossPlatforms) {
  // Recorded once. A change here changes every recorded result and fingerprint: it must
  // be deliberate.
  EXPECT_EQ(derive_seed(42, "arrivals"), 2010144674994210343ULL);
  Rng rng(derive_seed(42, "arrivals"));
  EXPECT_EQ(rng.next_u64(), 17178141800793070875ULL);
  EXPECT_EQ(rng.next_u64(), 15303239393393547886ULL);
  EXPECT_NE(derive_seed(42, "arrivals"), derive_seed(42, "lengths"));
  EXPECT_NE(derive_seed(42, "arrivals"), derive_seed(43, "arrivals"));
}

TEST(RngTest, NamedStreamsAreIndependentOfCreationOrder) {
  RngStreams one(9);
  RngStreams two(9);
  const auto a1 = one.stream("a").next_u64();
  const auto b1 = one.stream("b").next_u64();
  const auto b2 = two.stream("b").next_u64();
  const auto a2 = two.stream("a").next_u64();
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
}

double mean_of(int n, const std::function<double()>& draw) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += draw();
  return sum / n;
}

TEST(RngTest, DistributionsHaveTheirMeans) {
  Rng rng(3);
  EXPECT_NEAR(mean_of(200000, [&] { return rng.uniform(); }), 0.5, 0.005);
  EXPECT_NEAR(mean_of(200000, [&] { return rng.exponential(4.0); }), 0.25, 0.005);
  EXPECT_NEAR(mean_of(200000, [&] { return rng.normal(); }), 0.0, 0.01);
  EXPECT_NEAR(mean_of(200000, [&] { return rng.gamma(0.4, 2.0); }), 0.8, 0.02);
  EXPECT_NEAR(mean_of(200000, [&] { return rng.gamma(3.0, 0.5); }), 1.5, 0.02);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) ++counts[rng.uniform_int(7)];
  for (const int count : counts) EXPECT_NEAR(count, 10000, 400);
}

}  // namespace
}  // namespace meshsim::engine
