// The observation's arrival-rate averages against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "rl/env/observation.hpp"

namespace meshsim::rl {
namespace {

TEST(ArrivalAveragesTest, MoveOneMinusEToTheMinusTOverTauOfTheWayAndReportTheirLogGrowthPerMinute) {
  ArrivalAverages rates;
  rates.start(2.0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rates.averages()[i], 2.0);
    EXPECT_EQ(rates.slopes_per_minute()[i], 0.0);
  }
  rates.add(5.0, 60.0);  // one minute at 5 req/s
  // 2 + 3 (1 - e^-1), 2 + 3 (1 - e^-0.2), 2 + 3 (1 - e^-(1/15))
  EXPECT_NEAR(rates.averages()[0], 3.896361676, 1e-9);
  EXPECT_NEAR(rates.averages()[1], 2.543807741, 1e-9);
  EXPECT_NEAR(rates.averages()[2], 2.193479045, 1e-9);
  // ln(1 + 3.8964) - ln(3) over one minute
  EXPECT_NEAR(rates.slopes_per_minute()[0], 0.489880126, 1e-9);
  EXPECT_NEAR(rates.slopes_per_minute()[1], 0.166589493, 1e-9);
  EXPECT_NEAR(rates.slopes_per_minute()[2], 0.062498644, 1e-9);
  // Four 15 s intervals end where one minute does; the slope is per minute whatever the step.
  ArrivalAverages stepped;
  stepped.start(2.0);
  for (int i = 0; i < 4; ++i) stepped.add(5.0, 15.0);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(stepped.averages()[i], rates.averages()[i], 1e-12);
  const double last_quarter = std::log1p(stepped.averages()[0]);
  ArrivalAverages three = {};
  three.start(2.0);
  for (int i = 0; i < 3; ++i) three.add(5.0, 15.0);
  EXPECT_NEAR(stepped.slopes_per_minute()[0], (last_quarter - std::log1p(three.averages()[0])) * 4.0, 1e-12);
  // A steady rate stops moving.
  for (int i = 0; i < 2000; ++i) stepped.add(5.0, 15.0);  // over 30 time constants of the slowest
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(stepped.averages()[i], 5.0, 1e-6);
    EXPECT_NEAR(stepped.slopes_per_minute()[i], 0.0, 1e-6);
  }
}

}  // namespace
}  // namespace meshsim::rl
