#include "scheduler/resources.hpp"
#include "scheduler/scheduler_metrics.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace meshsim::scheduler {
namespace {

TEST(ResourceVectorTest, ArithmeticIsExactInMilliUnits) {
  ResourceVector total;
  // 0.1 added ten times is exactly 1 here, unlike in floating point.
  for (int i = 0; i < 10; ++i) total += ResourceVector::of(0.1, 0.0, 0.1);
  EXPECT_EQ(total, ResourceVector::of(1.0, 0.0, 1.0));
  EXPECT_EQ(total.gpu_milli(), 1000);
}

TEST(ResourceVectorTest, FitsComparesEveryComponentIncludingCustom) {
  auto capacity = ResourceVector::of(8, 1024, 8).with_custom("accelerator", 2);
  EXPECT_TRUE(ResourceVector::of(8, 1024, 8).fits_in(capacity));
  EXPECT_FALSE(ResourceVector::of(8.001, 0, 0).fits_in(capacity));
  EXPECT_TRUE(ResourceVector::of(1, 1, 1).with_custom("accelerator", 2).fits_in(capacity));
  EXPECT_FALSE(ResourceVector::of(1, 1, 1).with_custom("accelerator", 3).fits_in(capacity));
  EXPECT_FALSE(ResourceVector::of(0, 0, 0).with_custom("tpu", 1).fits_in(capacity));
}

// Small amounts, negative ones too (a ledger's running differences), and custom names
// present on one side only.
ResourceVector random_vector(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> amount(-2, 3);
  std::uniform_int_distribution<int> coin(0, 2);
  const char* names[] = {"a", "accelerator", "b", "tpu"};
  auto v = ResourceVector::of(amount(rng), amount(rng), amount(rng));
  // of() takes non-negative amounts; negatives come from subtraction.
  v -= ResourceVector::of(amount(rng) > 1 ? 1 : 0, 0, amount(rng) > 1 ? 1 : 0);
  for (const char* name : names) {
    if (coin(rng) == 0) v += ResourceVector().with_custom(name, amount(rng) + 2);
    if (coin(rng) == 0) v -= ResourceVector().with_custom(name, amount(rng) + 2);
  }
  return v;
}

// fits_in walks the two vectors without building their difference: it must agree with
// the definition (capacity - need has no negative component) for any amounts.
TEST(ResourceVectorTest, FitsInAgreesWithTheDifferenceOnRandomVectors) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const ResourceVector need = random_vector(rng);
    const ResourceVector capacity = random_vector(rng);
    ASSERT_EQ(need.fits_in(capacity), (capacity - need).is_non_negative())
        << need.to_string() << " in " << capacity.to_string();
  }
}

// fits_in_sum (what-if room on a node) must agree with building the sum.
TEST(ResourceVectorTest, FitsInSumAgreesWithFitsInOfTheSumOnRandomVectors) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const ResourceVector need = random_vector(rng);
    const ResourceVector a = random_vector(rng);
    const ResourceVector b = random_vector(rng);
    ASSERT_EQ(need.fits_in_sum(a, b), need.fits_in(a + b))
        << need.to_string() << " in " << a.to_string() << " + " << b.to_string();
  }
}

TEST(ResourceVectorTest, AmountsPrintExactlyToTheThousandth) {
  EXPECT_EQ(ResourceVector::of(1048576.125, 0.05, 0.005).to_string(), "cpu=1048576.125 memory_mb=0.05 gpu=0.005");
  EXPECT_EQ((ResourceVector::of(0, 0, 1) - ResourceVector::of(2.5, 1e12, 1.25)).to_string(),
            "cpu=-2.5 memory_mb=-1000000000000 gpu=-0.25");
  EXPECT_EQ(ResourceVector().with_custom("accelerator", 0.1).to_string(), "cpu=0 memory_mb=0 gpu=0 accelerator=0.1");
}

TEST(ResourceVectorTest, CustomResourcesCancelOutAndPrintSorted) {
  auto v = ResourceVector::of(1, 2, 0.5).with_custom("b", 1).with_custom("a", 1);
  EXPECT_EQ(v.to_string(), "cpu=1 memory_mb=2 gpu=0.5 a=1 b=1");
  v -= ResourceVector().with_custom("a", 1);
  EXPECT_EQ(v.custom_milli("a"), 0);
  EXPECT_EQ(v.custom_milli_all().size(), 1u);
}

TEST(ResourceLedgerTest, ReserveCommitReleaseKeepsTheBooksBalanced) {
  ResourceLedger ledger(ResourceVector::of(4, 100, 2));
  ASSERT_TRUE(ledger.reserve(ResourceVector::of(3, 50, 1)));
  EXPECT_EQ(ledger.available(), ResourceVector::of(1, 50, 1));
  ledger.commit(ResourceVector::of(3, 50, 1));
  EXPECT_EQ(ledger.used(), ResourceVector::of(3, 50, 1));
  EXPECT_TRUE(ledger.reserved().is_zero());
  ledger.release(ResourceVector::of(3, 50, 1));
  EXPECT_EQ(ledger.available(), ledger.capacity());
}

TEST(ResourceLedgerTest, AFailedReserveChangesNothing) {
  ResourceLedger ledger(ResourceVector::of(4, 100, 2));
  ASSERT_TRUE(ledger.reserve(ResourceVector::of(2, 0, 0)));
  const auto result = ledger.reserve(ResourceVector::of(3, 0, 0));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "insufficient resources: requested cpu=3 memory_mb=0 gpu=0, available cpu=2 memory_mb=100 gpu=2");
  EXPECT_EQ(ledger.reserved(), ResourceVector::of(2, 0, 0));
  ledger.rollback(ResourceVector::of(2, 0, 0));
  EXPECT_TRUE(ledger.reserved().is_zero());
}

// available() is kept up to date rather than computed: after any sequence of changes it
// must equal its definition.
TEST(ResourceLedgerTest, AvailableIsAlwaysCapacityLessReservedAndUsed) {
  std::mt19937_64 rng(3);
  const auto shape = [&] {
    std::uniform_int_distribution<int> amount(0, 3);
    auto v = ResourceVector::of(amount(rng), amount(rng) * 100, amount(rng) * 0.5);
    if (amount(rng) == 0) v.with_custom("gpu_H100", amount(rng));
    return v;
  };
  for (int run = 0; run < 200; ++run) {
    ResourceLedger ledger(ResourceVector::of(8, 800, 4).with_custom("gpu_H100", 4));
    std::vector<ResourceVector> reserved, used;
    for (int step = 0; step < 60; ++step) {
      switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
        case 0:
          if (auto amount = shape(); ledger.reserve(amount)) reserved.push_back(amount);
          break;
        case 1:
          if (!reserved.empty()) {
            ledger.commit(reserved.back());
            used.push_back(reserved.back());
            reserved.pop_back();
          }
          break;
        case 2:
          if (!reserved.empty()) {
            ledger.rollback(reserved.back());
            reserved.pop_back();
          }
          break;
        case 3:
          if (!used.empty()) {
            ledger.release(used.back());
            used.pop_back();
          }
          break;
        default:
          (void)ledger.resize(ResourceVector::of(8, 800, 4).with_custom("gpu_H100", 4) + shape());
      }
      ASSERT_EQ(ledger.available(), ledger.capacity() - ledger.reserved() - ledger.used())
          << "run " << run << " step " << step;
    }
  }
}

TEST(ResourceLedgerTest, OverdrawingIsABrokenInvariant) {
  ResourceLedger ledger(ResourceVector::of(4, 100, 2));
  EXPECT_THROW(ledger.commit(ResourceVector::of(1, 0, 0)), std::logic_error);
  EXPECT_THROW(ledger.release(ResourceVector::of(1, 0, 0)), std::logic_error);
  ASSERT_TRUE(ledger.reserve(ResourceVector::of(1, 0, 0)));
  ledger.commit(ResourceVector::of(1, 0, 0));
  EXPECT_FALSE(ledger.resize(ResourceVector::of(0.5, 100, 2)));
  EXPECT_TRUE(ledger.resize(ResourceVector::of(1, 100, 2)));
}

}  // namespace
}  // namespace meshsim::scheduler

namespace meshsim::scheduler {
namespace {

TEST(LatencyHistogramTest, QuantilesInterpolateWithinTheirBucketLikePrometheus) {
  LatencyHistogram h;
  EXPECT_EQ(h.quantile(0.5), 0.0);
  for (int i = 0; i < 4; ++i) h.observe(0.00005);  // bucket (0, 0.0001]: under 0.1 µs
  for (int i = 0; i < 4; ++i) h.observe(0.002);    // bucket (0.001, 0.0025]
  EXPECT_DOUBLE_EQ(h.quantile(0.25), 0.00005);     // rank 2 of 4 in the first bucket
  EXPECT_DOUBLE_EQ(h.quantile(0.75), 0.001 + 0.0015 * 0.5);
  EXPECT_EQ(h.counts[0], 4u);
  h.observe(1000.0);  // above every bound
  EXPECT_DOUBLE_EQ(h.quantile(1.0), 100.0);
}

}  // namespace
}  // namespace meshsim::scheduler
