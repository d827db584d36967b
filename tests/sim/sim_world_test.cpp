// SimWorld: the scheduling core on an engine::Simulation's clock, its timers as engine
// events (a held preemptor's capacity is released at hold_timeout of simulated time).
#include "sim/shared/sim_world.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler.hpp"
#include "tests/scheduler/timer_calls.hpp"

namespace meshsim::scheduler {
namespace {

using engine::SimTime;
using shared::SimWorld;

TEST(SimWorldTest, TimersAreEngineEventsThatNeverFireEarlyAndCanBeCancelled) {
  engine::Simulation sim(1);
  SimWorld world(sim);
  TimerCalls calls;
  std::vector<double> fired;
  calls.after(world, world, 2.5, [&] { fired.push_back(world.now().seconds()); });
  const TimerId cancelled = calls.after(world, world, 1.0, [&] { fired.push_back(-1); });
  calls.after(world, world, 1e-7, [&] { fired.push_back(world.now().seconds()); });  // rounds up to 1 us
  calls.after(world, world, -5.0, [&] { fired.push_back(world.now().seconds()); });  // passed: fires now
  world.cancel(cancelled);
  sim.run_until(SimTime::from_seconds(10));
  EXPECT_EQ(fired, (std::vector<double>{0.0, 1e-6, 2.5}));
  EXPECT_EQ(world.armed_timers(), 0u);
}

TEST(SimWorldTest, TheCoreRunsOnSimulatedTimeAndItsHoldsExpireAsEvents) {
  engine::Simulation sim(1);
  SimWorld world(sim);
  Scheduler scheduler(world, &world, &world);
  scheduler.cluster().add_node({"node-0", ResourceVector::of(64, 262'144, 8), {}, "h100-80gb"});
  ASSERT_TRUE(scheduler.ensure_pool({"pool", {}, ResourceVector::of(1, 1024, 0), 0, PlacementStrategy::kStrictPack}));
  sim.run_until(SimTime::from_seconds(100));
  TaskSpec low{{1.0, {}, 0.0, "", 0.0}, "low", "pool", "w", ResourceVector::of(1, 1024, 0), ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(low).result.success);
  EXPECT_EQ(scheduler.tasks().find("low")->start_time, SimTime::from_seconds(100));
  const auto outcome = scheduler.execute_preemption("low", scheduler.tasks().find("low")->agent, "never-comes");
  ASSERT_TRUE(outcome.result.success);
  EXPECT_TRUE(outcome.cancel_success);
  EXPECT_EQ(world.cancels_asked(), 1u);
  TaskSpec other{{9.0, {}, 0.0, "", 0.0}, "other", "pool", "w", ResourceVector::of(1, 1024, 0), ""};
  EXPECT_FALSE(scheduler.submit_task_with_preemption(other).result.success) << "held for the preemptor";
  sim.run_until(SimTime::from_seconds(129.999));
  EXPECT_FALSE(scheduler.submit_task_with_preemption(other).result.success);
  sim.run_until(SimTime::from_seconds(130));  // hold_timeout (30 s) of simulated time
  EXPECT_TRUE(scheduler.submit_task_with_preemption(other).result.success);
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
}

// Two-phase preemption: the cancel is asked now and completes when the agent answers, or
// at cancel_timeout for one that hangs (or answers too late). The preemptor holds the
// victims' room from now and learns when the last of them stops (ready_in); the agents'
// owner hears of each stop at its time.
TEST(SimWorldTest, ACancelCompletesWhenTheAgentAnswersOrAtCancelTimeout) {
  engine::Simulation sim(1);
  SimWorld world(sim);
  Scheduler scheduler(world, &world, &world);
  scheduler.cluster().add_node({"node-0", ResourceVector::of(64, 262'144, 8), {}, "h100-80gb"});
  ASSERT_TRUE(scheduler.ensure_pool({"pool", {}, ResourceVector::of(64, 262'144, 8), 0, PlacementStrategy::kStrictPack}));
  // Agents named "hung" never answer, "slow" ones after 45 s, the others after 2 s; a stop
  // is recorded by the names of the task the core holds under the id it was told.
  struct Agents final : SimWorld::Agents {
    SimWorld& world;
    Scheduler& core;
    std::vector<std::string> stops;
    Agents(SimWorld& w, Scheduler& c) : world(w), core(c) {}
    std::optional<SimTime> answer_in(const Task& task) override {
      if (task.agent == "hung") return std::nullopt;
      return SimTime::from_seconds(task.agent == "slow" ? 45.0 : 2.0);
    }
    void stopped(TaskId id, bool answered) override {
      const Task& task = *core.tasks().find(id);
      stops.push_back(task.agent + "/" + task.id + (answered ? " answered at " : " killed at ") +
                      std::to_string(world.now().seconds()));
    }
  } agents(world, scheduler);
  std::vector<std::string>& stops = agents.stops;
  world.set_agents(&agents);
  PolicyUpdate timeout;
  timeout.cancel_timeout = 30.0;
  ASSERT_TRUE(scheduler.update_preemption_policy(timeout).result.success);
  sim.run_until(SimTime::from_seconds(10));
  for (const char* name : {"quick", "hung"}) {
    TaskSpec low{{1.0, {}, 0.0, "", 0.0}, name, "pool", "w", ResourceVector::of(1, 1024, 4), name};
    ASSERT_TRUE(scheduler.submit_task_with_preemption(low).result.success);
  }
  TaskSpec high{{5.0, {}, 0.0, "", 0.0}, "high", "pool", "w", ResourceVector::of(1, 1024, 8), ""};
  const auto placed = scheduler.submit_task_with_preemption(high);
  ASSERT_TRUE(placed.result.success) << placed.result.error;
  EXPECT_EQ(placed.preempted.size(), 2u);
  EXPECT_EQ(placed.ready_in, SimTime::from_seconds(30));  // the hung agent, killed at the timeout
  EXPECT_TRUE(stops.empty());               // nobody has stopped yet
  // The room is the preemptor's from now: nothing else takes it meanwhile.
  TaskSpec other{{1.0, {}, 0.0, "", 0.0}, "other", "pool", "w", ResourceVector::of(1, 1024, 1), ""};
  EXPECT_FALSE(scheduler.submit_task_with_preemption(other).result.success);
  sim.run_until(SimTime::from_seconds(100));
  EXPECT_EQ(stops, (std::vector<std::string>{"quick/quick answered at 12.000000", "hung/hung killed at 40.000000"}));

  // execute_preemption says the same: an agent answering after the timeout is killed at it.
  TaskSpec slow{{1.0, {}, 0.0, "", 0.0}, "slow-task", "pool", "w", ResourceVector::of(1, 1024, 0), "slow"};
  ASSERT_TRUE(scheduler.complete("high").success);
  ASSERT_TRUE(scheduler.submit_task_with_preemption(slow).result.success);
  const auto outcome = scheduler.execute_preemption("slow-task", "slow");
  ASSERT_TRUE(outcome.result.success);
  EXPECT_FALSE(outcome.cancel_success);
  EXPECT_EQ(outcome.cancel_wait, SimTime::from_seconds(30));
  EXPECT_EQ(outcome.stops_in, SimTime::from_seconds(30));
  sim.run_until(SimTime::from_seconds(200));
  EXPECT_EQ(stops.back(), "slow/slow-task killed at 130.000000");
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
}

}  // namespace
}  // namespace meshsim::scheduler
