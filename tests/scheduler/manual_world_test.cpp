// ManualWorld, the clock and timers scripts and unit tests drive the core with.
#include "scheduler/manual_world.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace meshsim::scheduler {
namespace {

TEST(ManualWorldTest, TimersFireInTimeOrderAsTheClockAdvances) {
  ManualWorld world;
  std::vector<double> fired;
  world.call_after(3.0, [&] { fired.push_back(world.now()); });
  world.call_after(1.0, [&] { fired.push_back(world.now()); });
  world.advance(2.0);
  EXPECT_EQ(fired, (std::vector<double>{1.0}));
  world.advance(2.0);
  EXPECT_EQ(fired, (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(world.now(), 4.0);
}

// Issue 9: a timed-out cancel moved the clock to 5 s without firing the timer due at 2 s,
// which then fired with now() == 2: the clock ran backwards. A timer overtaken so fires
// late, at the current time; the clock never goes back.
TEST(ManualWorldTest, ATimerOvertakenByATimedOutCancelFiresLateNotInThePast) {
  ManualWorld world;
  std::vector<double> fired;
  world.call_after(2.0, [&] { fired.push_back(world.now()); });
  world.hanging.insert("agent");
  const auto reply = world.cancel_task("agent", "task", 5.0);
  EXPECT_FALSE(reply.answered);
  EXPECT_EQ(world.now(), 5.0);
  world.advance(1.0);
  EXPECT_EQ(fired, (std::vector<double>{5.0}));
  EXPECT_EQ(world.now(), 6.0);
}

}  // namespace
}  // namespace meshsim::scheduler
