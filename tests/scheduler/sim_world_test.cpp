// SimWorld: the scheduling core on an engine::Simulation's clock, its timers as engine
// events (a held preemptor's capacity is released at hold_timeout of simulated time).
#include "scheduler/sim_world.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {
namespace {

using engine::SimTime;

TEST(SimWorldTest, TimersAreEngineEventsThatNeverFireEarlyAndCanBeCancelled) {
  engine::Simulation sim(1);
  SimWorld world(sim);
  std::vector<double> fired;
  world.call_after(2.5, [&] { fired.push_back(world.now()); });
  const TimerId cancelled = world.call_after(1.0, [&] { fired.push_back(-1); });
  world.call_after(1e-7, [&] { fired.push_back(world.now()); });  // rounds up to 1 us
  world.cancel(cancelled);
  sim.run_until(SimTime::from_seconds(10));
  EXPECT_EQ(fired, (std::vector<double>{1e-6, 2.5}));
  EXPECT_EQ(world.armed_timers(), 0u);
}

TEST(SimWorldTest, TheCoreRunsOnSimulatedTimeAndItsHoldsExpireAsEvents) {
  engine::Simulation sim(1);
  SimWorld world(sim);
  Scheduler scheduler(world, &world, &world);
  scheduler.cluster().add_node({"node-0", ResourceVector::of(64, 262'144, 8), {}, "h100-80gb"});
  ASSERT_TRUE(scheduler.ensure_pool({"pool", {}, ResourceVector::of(1, 1024, 0), 0, PlacementStrategy::kStrictPack}));
  sim.run_until(SimTime::from_seconds(100));
  TaskSpec low{"low", "pool", "w", ResourceVector::of(1, 1024, 0), 1.0, {}, 0.0, "", 0.0, ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(low).result.success);
  EXPECT_EQ(scheduler.task("low")->start_time, 100.0);
  const auto outcome = scheduler.execute_preemption("low", scheduler.task("low")->agent, "never-comes");
  ASSERT_TRUE(outcome.result.success);
  EXPECT_TRUE(outcome.cancel_success);
  EXPECT_EQ(world.cancels_asked(), 1u);
  TaskSpec other{"other", "pool", "w", ResourceVector::of(1, 1024, 0), 9.0, {}, 0.0, "", 0.0, ""};
  EXPECT_FALSE(scheduler.submit_task_with_preemption(other).result.success) << "held for the preemptor";
  sim.run_until(SimTime::from_seconds(129.999));
  EXPECT_FALSE(scheduler.submit_task_with_preemption(other).result.success);
  sim.run_until(SimTime::from_seconds(130));  // hold_timeout (30 s) of simulated time
  EXPECT_TRUE(scheduler.submit_task_with_preemption(other).result.success);
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
}

}  // namespace
}  // namespace meshsim::scheduler
