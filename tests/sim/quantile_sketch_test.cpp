#include "sim/metrics/quantile_sketch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/engine/rng.hpp"

namespace meshsim::metrics {
namespace {

TEST(QuantileSketchTest, QuantilesAreWithinTheRelativeAccuracyOfExactOnes) {
  engine::Rng rng(1);
  QuantileSketch sketch;
  std::vector<double> values;
  for (int i = 0; i < 100000; ++i) {
    const double v = rng.gamma(0.5, 2.0) * 10.0;  // heavy-ish tail over decades
    values.push_back(v);
    sketch.add(v);
  }
  std::sort(values.begin(), values.end());
  for (const double q : {0.01, 0.1, 0.5, 0.9, 0.99, 0.999}) {
    const double exact = values[static_cast<std::size_t>(q * (values.size() - 1))];
    EXPECT_NEAR(sketch.quantile(q), exact, exact * QuantileSketch::kRelativeAccuracy * 1.01) << "q=" << q;
  }
  EXPECT_EQ(sketch.quantile(0.0), values.front());
  EXPECT_EQ(sketch.quantile(1.0), values.back());
  EXPECT_EQ(sketch.count(), 100000u);
}

TEST(QuantileSketchTest, ZerosAndEmptySketchesAreHandled) {
  QuantileSketch empty;
  EXPECT_EQ(empty.quantile(0.5), 0.0);
  EXPECT_EQ(empty.mean(), 0.0);
  QuantileSketch sketch;
  for (int i = 0; i < 10; ++i) sketch.add(0.0);
  sketch.add(4.0);
  EXPECT_EQ(sketch.quantile(0.5), 0.0);
  EXPECT_EQ(sketch.quantile(1.0), 4.0);
  EXPECT_NEAR(sketch.mean(), 4.0 / 11.0, 1e-12);
}

}  // namespace
}  // namespace meshsim::metrics
