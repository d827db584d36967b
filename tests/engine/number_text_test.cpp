// Numbers as messages and tables show them.
#include "sim/engine/number_text.hpp"

#include <gtest/gtest.h>

namespace meshsim {
namespace {

TEST(NumberTextTest, PercentagesAreRoundedDownSoAMissNeverReadsAsNone) {
  EXPECT_EQ(percent_text(0.99985), "99.98%");
  EXPECT_EQ(percent_text(0.999999), "99.99%");
  EXPECT_EQ(percent_text(0.9999999999999), "99.99%");  // within the nudge of 100%
  EXPECT_EQ(percent_text(0.99999, 1), "99.9%");
  EXPECT_EQ(percent_text(1.0), "100.00%");
  EXPECT_EQ(percent_text(0.29), "29.00%");  // 28.999...% in binary
  EXPECT_EQ(percent_text(0.0), "0.00%");
  EXPECT_EQ(percent_text(0.5, 0), "50%");
  EXPECT_EQ(percent_text(0.12345, 1), "12.3%");
}

TEST(NumberTextTest, NumbersUseSixSignificantDigits) {
  EXPECT_EQ(number_text(0.25), "0.25");
  EXPECT_EQ(number_text(1e13), "1e+13");
  EXPECT_EQ(number_text(21600), "21600");
}

}  // namespace
}  // namespace meshsim
