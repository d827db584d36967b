// ScriptClock, a scenario script's one clock, against ManualWorld (the world moved by
// hand that scripts ran on before): the same timers fire in the same order at the same
// times, whatever the script does, while the simulation under it runs its own events
// through a hung agent's wait.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "scheduler/manual_world.hpp"
#include "sim/script/script_clock.hpp"
#include "tests/scheduler/timer_calls.hpp"

namespace meshsim::script {
namespace {

using engine::SimTime;

// An event of the simulation's own (a serving instance's, in a script).
struct Recorder final : engine::EventHandler {
  explicit Recorder(engine::Simulation& s) : sim(s) {}
  void on_event(const engine::EventPayload& payload) override { fired.push_back({payload.a, sim.now().seconds()}); }
  engine::Simulation& sim;
  std::vector<std::pair<std::uint64_t, double>> fired;
};

TEST(ScriptClockTest, FiresTheTimersManualWorldFiresInItsOrderAndAtItsTimes) {
  // Random scripts of arming, cancelling, advancing and waiting on hung agents: every
  // timer fires at the same clock reading, in the same order, and the clocks agree after
  // every operation. Times are in 64ths of a second, exact in doubles and microseconds.
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    std::mt19937_64 rng(seed);
    engine::Simulation sim(1);
    ScriptClock clock(sim);
    scheduler::ManualWorld manual;
    clock.hanging.insert("hung");
    manual.hanging.insert("hung");
    scheduler::TimerCalls calls;
    std::vector<std::string> fired_clock, fired_manual;
    std::vector<std::pair<scheduler::TimerId, scheduler::TimerId>> armed;
    const auto ticks = [&rng](int most) { return std::uniform_int_distribution<int>(0, most)(rng) / 64.0; };
    for (int op = 0; op < 60; ++op) {
      const int what = std::uniform_int_distribution<int>(0, 9)(rng);
      if (what < 4) {
        const double after = ticks(200);
        const std::string name = std::to_string(op);
        armed.emplace_back(
            calls.after(clock, clock, after, [&, name] { fired_clock.push_back(name + "@" + std::to_string(clock.now_s())); }),
            calls.after(manual, manual, after,
                        [&, name] { fired_manual.push_back(name + "@" + std::to_string(manual.now_s())); }));
      } else if (what < 5 && !armed.empty()) {
        const auto pick = std::uniform_int_distribution<std::size_t>(0, armed.size() - 1)(rng);
        clock.cancel(armed[pick].first);
        manual.cancel(armed[pick].second);
      } else if (what < 8) {
        const double seconds = ticks(120);
        ASSERT_TRUE(clock.advance(seconds));
        manual.advance(seconds);
      } else {
        const auto timeout = SimTime::from_seconds(ticks(100));
        scheduler::Task task;
        task.id = "t";
        task.agent = what == 8 ? "hung" : "fine";
        const auto a = clock.cancel_task(task, timeout);
        const auto b = manual.cancel_task(task, timeout);
        EXPECT_EQ(a.answered, b.answered);
        EXPECT_EQ(a.waited, b.waited);
      }
      ASSERT_EQ(clock.now(), manual.now()) << "seed " << seed << ", operation " << op;
      ASSERT_EQ(fired_clock, fired_manual) << "seed " << seed << ", operation " << op;
    }
  }
}

TEST(ScriptClockTest, AHungAgentsWaitRunsTheSimulationButHoldsTheCoresTimersToTheNextAdvance) {
  engine::Simulation sim(1);
  ScriptClock clock(sim);
  Recorder serving(sim);
  clock.hanging.insert("hung");
  bool core_timer = false;
  scheduler::TimerCalls calls;
  calls.after(clock, clock, 1.0, [&] { core_timer = true; });
  sim.schedule_at(SimTime::from_seconds(2.0), serving, {7, 0});
  scheduler::Task task;
  task.id = "t";
  task.agent = "hung";
  const auto reply = clock.cancel_task(task, SimTime::from_seconds(5.0));
  EXPECT_FALSE(reply.answered);
  EXPECT_DOUBLE_EQ(clock.now_s(), 5.0);
  // The serving side ran through the wait, at its own times; the core, mid-call, did not.
  ASSERT_EQ(serving.fired.size(), 1u);
  EXPECT_DOUBLE_EQ(serving.fired[0].second, 2.0);
  EXPECT_FALSE(core_timer);
  ASSERT_TRUE(clock.advance(0));
  EXPECT_TRUE(core_timer);
}

TEST(ScriptClockTest, AnAdvancePastTheClocksLimitIsRefusedAndChangesNothing) {
  engine::Simulation sim(1);
  ScriptClock clock(sim);
  ASSERT_TRUE(clock.advance(10));
  const auto refused = clock.advance(SimTime::kMaxSeconds);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("limit"), std::string::npos) << refused.error().message;
  EXPECT_DOUBLE_EQ(clock.now_s(), 10);
  EXPECT_FALSE(clock.advance(1e13));
  EXPECT_FALSE(clock.advance(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(clock.advance(SimTime::kMaxSeconds - 10));
}

TEST(ScriptClockTest, ARewindMovesTheClockAndDropsTheAbandonedTimelinesTimers) {
  engine::Simulation sim(1);
  ScriptClock clock(sim);
  int old_fired = 0, new_fired = 0;
  scheduler::TimerCalls calls;
  calls.after(clock, clock, 5, [&] { ++old_fired; });
  ASSERT_TRUE(clock.advance(3));
  clock.rewind(SimTime::from_seconds(1));
  EXPECT_DOUBLE_EQ(clock.now_s(), 1);
  calls.after(clock, clock, 2, [&] { new_fired = static_cast<int>(clock.now_s()); });
  ASSERT_TRUE(clock.advance(10));
  EXPECT_EQ(old_fired, 0);
  EXPECT_EQ(new_fired, 3);
  EXPECT_DOUBLE_EQ(clock.now_s(), 11);
  clock.rewind(SimTime::from_seconds(100));  // ahead, too
  EXPECT_DOUBLE_EQ(clock.now_s(), 100);
}

}  // namespace
}  // namespace meshsim::script
