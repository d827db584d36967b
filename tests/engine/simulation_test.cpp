#include "sim/engine/simulation.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "sim/engine/timer.hpp"

namespace meshsim::engine {
namespace {

// Records (time, payload.a) of every event it receives.
class Recorder final : public EventHandler {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void on_event(const EventPayload& payload) override { seen.emplace_back(sim_.now().us(), payload.a); }
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;

 private:
  Simulation& sim_;
};

TEST(SimulationTest, RunsEventsInTimeOrderAndAdvancesTheClock) {
  Simulation sim(1);
  Recorder recorder(sim);
  sim.schedule_at(SimTime::from_ms(5), recorder, {1, 0});
  sim.schedule_at(SimTime::from_ms(1), recorder, {2, 0});
  sim.schedule_at(SimTime::from_ms(5), recorder, {3, 0});
  EXPECT_EQ(sim.run(), 3u);
  EXPECT_EQ(recorder.seen, (std::vector<std::pair<std::int64_t, std::uint64_t>>{{1000, 2}, {5000, 1}, {5000, 3}}));
  EXPECT_EQ(sim.now(), SimTime::from_ms(5));
  EXPECT_EQ(sim.state(), RunState::kFinished);
}

TEST(SimulationTest, RunUntilStopsAtTheBoundaryInclusiveAndParksTheClock) {
  Simulation sim(1);
  Recorder recorder(sim);
  sim.schedule_at(SimTime::from_us(10), recorder, {1, 0});
  sim.schedule_at(SimTime::from_us(20), recorder, {2, 0});
  sim.schedule_at(SimTime::from_us(21), recorder, {3, 0});
  EXPECT_EQ(sim.run_until(SimTime::from_us(20)), 2u);
  EXPECT_EQ(sim.now(), SimTime::from_us(20));
  EXPECT_EQ(sim.state(), RunState::kPaused);
  EXPECT_EQ(sim.run_until(SimTime::from_us(100)), 1u);
  EXPECT_EQ(sim.now(), SimTime::from_us(100));
  EXPECT_EQ(sim.pending_events(), 0u);
}

TEST(SimulationTest, StepRunsOneEventAtATime) {
  Simulation sim(1);
  Recorder recorder(sim);
  sim.schedule_at(SimTime::from_us(7), recorder, {1, 0});
  sim.schedule_at(SimTime::from_us(9), recorder, {2, 0});
  EXPECT_TRUE(sim.step());
  EXPECT_EQ(sim.now(), SimTime::from_us(7));
  EXPECT_EQ(recorder.seen.size(), 1u);
  EXPECT_TRUE(sim.step());
  EXPECT_FALSE(sim.step());
  EXPECT_EQ(sim.events_processed(), 2u);
}

TEST(SimulationTest, RejectsEventsInThePast) {
  Simulation sim(1);
  Recorder recorder(sim);
  sim.schedule_at(SimTime::from_us(10), recorder);
  sim.run_until(SimTime::from_us(50));
  EXPECT_THROW(sim.schedule_at(SimTime::from_us(49), recorder), std::logic_error);
  EXPECT_NO_THROW(sim.schedule_at(SimTime::from_us(50), recorder));
}

// A handler that (wrongly) re-enters the run loop.
class Reentrant final : public EventHandler {
 public:
  explicit Reentrant(Simulation& sim) : sim_(sim) {}
  void on_event(const EventPayload&) override {
    try {
      sim_.run_until(SimTime::from_us(100));
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  }
  std::string message;

 private:
  Simulation& sim_;
};

TEST(SimulationTest, RunFromInsideAHandlerIsRejectedNamingTheCall) {
  Simulation sim(1);
  Reentrant handler(sim);
  sim.schedule_at(SimTime::from_us(1), handler);
  sim.run();
  EXPECT_NE(handler.message.find("run_until called from inside an event handler"), std::string::npos);
}

class Stopper final : public EventHandler {
 public:
  explicit Stopper(Simulation& sim) : sim_(sim) {}
  void on_event(const EventPayload&) override { sim_.stop(); }

 private:
  Simulation& sim_;
};

TEST(SimulationTest, StopEndsTheRunAfterTheCurrentEvent) {
  Simulation sim(1);
  Stopper stopper(sim);
  Recorder recorder(sim);
  sim.schedule_at(SimTime::from_us(1), stopper);
  sim.schedule_at(SimTime::from_us(2), recorder);
  sim.run();
  EXPECT_TRUE(recorder.seen.empty());
  EXPECT_EQ(sim.state(), RunState::kFinished);
  EXPECT_THROW(sim.run(), std::logic_error);
}

TEST(TimerTest, FiresOnceAtItsDeadline) {
  Simulation sim(1);
  Recorder recorder(sim);
  Timer timer(sim, recorder, {42, 0});
  timer.arm_at(SimTime::from_us(30));
  EXPECT_TRUE(timer.armed());
  sim.run();
  EXPECT_EQ(recorder.seen, (std::vector<std::pair<std::int64_t, std::uint64_t>>{{30, 42}}));
  EXPECT_FALSE(timer.armed());
}

TEST(TimerTest, CancelledAndReArmedTimersDeliverOnlyTheLatestDeadline) {
  Simulation sim(1);
  Recorder recorder(sim);
  Timer cancelled(sim, recorder, {1, 0});
  Timer rearmed(sim, recorder, {2, 0});
  cancelled.arm_at(SimTime::from_us(10));
  cancelled.cancel();
  rearmed.arm_at(SimTime::from_us(20));
  rearmed.arm_at(SimTime::from_us(40));
  sim.run();
  EXPECT_EQ(recorder.seen, (std::vector<std::pair<std::int64_t, std::uint64_t>>{{40, 2}}));
}

TEST(TimerTest, RankedTimersKeepTheirOrderHoweverOftenTheyWereReArmed) {
  Simulation sim(1);
  Recorder recorder(sim);
  Timer low(sim, recorder, {1, 0}, 1);
  Timer high(sim, recorder, {2, 0}, 2);
  high.arm_at(SimTime::from_us(50));
  low.arm_at(SimTime::from_us(10));
  low.arm_at(SimTime::from_us(50));  // re-armed after `high`, still runs first
  sim.schedule_at(SimTime::from_us(50), recorder, {3, 0});  // FIFO events of that time run first
  sim.run();
  EXPECT_EQ(recorder.seen, (std::vector<std::pair<std::int64_t, std::uint64_t>>{{50, 3}, {50, 1}, {50, 2}}));
}

TEST(SimulationTest, PeriodicHookRunsEveryNEvents) {
  Simulation sim(1);
  Recorder recorder(sim);
  for (int i = 0; i < 10; ++i) sim.schedule_at(SimTime::from_us(i), recorder);
  int calls = 0;
  sim.set_periodic_hook(3, [&calls](const Simulation&) { ++calls; });
  sim.run();
  EXPECT_EQ(calls, 3);
}

TEST(SimulationTest, ManySimulationsLiveSideBySide) {
  Simulation a(1);
  Simulation b(1);
  Recorder ra(a);
  Recorder rb(b);
  a.schedule_at(SimTime::from_us(5), ra);
  b.schedule_at(SimTime::from_us(9), rb);
  a.run();
  EXPECT_EQ(a.now(), SimTime::from_us(5));
  EXPECT_EQ(b.now(), SimTime::zero());
  EXPECT_EQ(a.rng("x").next_u64(), b.rng("x").next_u64());
}

}  // namespace
}  // namespace meshsim::engine
