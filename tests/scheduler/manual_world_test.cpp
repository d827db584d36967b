// ManualWorld, the clock and timers scripts and unit tests drive the core with.
#include "scheduler/manual_world.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tests/scheduler/timer_calls.hpp"

namespace meshsim::scheduler {
namespace {

TEST(ManualWorldTest, TimersFireInTimeOrderAsTheClockAdvances) {
  ManualWorld world;
  TimerCalls calls;
  std::vector<double> fired;
  calls.after(world, world, 3.0, [&] { fired.push_back(world.now_s()); });
  calls.after(world, world, 1.0, [&] { fired.push_back(world.now_s()); });
  world.advance(2.0);
  EXPECT_EQ(fired, (std::vector<double>{1.0}));
  world.advance(2.0);
  EXPECT_EQ(fired, (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(world.now_s(), 4.0);
}

// Issue 9: a timed-out cancel moved the clock to 5 s without firing the timer due at 2 s,
// which then fired with now() == 2: the clock ran backwards. A timer overtaken so fires
// late, at the current time; the clock never goes back.
TEST(ManualWorldTest, ATimerOvertakenByATimedOutCancelFiresLateNotInThePast) {
  ManualWorld world;
  TimerCalls calls;
  std::vector<double> fired;
  calls.after(world, world, 2.0, [&] { fired.push_back(world.now_s()); });
  world.hanging.insert("agent");
  Task task;
  task.id = "task";
  task.agent = "agent";
  const auto reply = world.cancel_task(task, SimTime::from_seconds(5.0));
  EXPECT_FALSE(reply.answered);
  EXPECT_EQ(world.now_s(), 5.0);
  world.advance(1.0);
  EXPECT_EQ(fired, (std::vector<double>{5.0}));
  EXPECT_EQ(world.now_s(), 6.0);
}

}  // namespace
}  // namespace meshsim::scheduler
