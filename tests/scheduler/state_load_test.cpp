// load_state on hand-edited states: each broken state is refused, naming the problem, and
// the scheduler is left exactly as it was. Kept placement groups are accounted for.
#include <gtest/gtest.h>

#include <functional>

#include "scheduler/manual_world.hpp"
#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {
namespace {

// A priority-1 task of "pool".
TaskSpec worker(const std::string& id, const ResourceVector& resources, double estimated_duration) {
  TaskSpec spec;
  spec.task_id = id;
  spec.pool = "pool";
  spec.actor_class = "Worker";
  spec.resources = resources;
  spec.priority = 1.0;
  spec.estimated_duration = estimated_duration;
  return spec;
}

class StateLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scheduler.cluster().add_node({"node-0", ResourceVector::of(16, 65536, 4), {}, "cpu"});
    ASSERT_TRUE(scheduler.create_pool({"pool", {}, ResourceVector::of(16, 65536, 4), 0, PlacementStrategy::kStrictPack}));
    for (const char* id : {"task-a", "task-b"}) {
      ASSERT_TRUE(scheduler.submit_task_with_preemption(worker(id, ResourceVector::of(2, 1024, 1), 10.0))
                      .result.success);
    }
    saved = scheduler.save_state();
  }
  void TearDown() override { EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{}); }

  // Loads `saved` changed by `edit`; expects a refusal mentioning `problem` and no change.
  void expect_refused(const std::function<void(SchedulerState&)>& edit, const std::string& problem) {
    SchedulerState broken = saved;
    edit(broken);
    const auto before = summarize(scheduler);
    const auto result = scheduler.load_state(broken);
    EXPECT_FALSE(result.success);
    EXPECT_NE(result.error.find(problem), std::string::npos) << "got: " << result.error;
    EXPECT_EQ(summarize(scheduler).tasks, before.tasks);
    EXPECT_EQ(summarize(scheduler).node_used, before.node_used);
    EXPECT_EQ(scheduler.save_state().tasks.size(), saved.tasks.size());
    EXPECT_EQ(scheduler.cluster().placement_groups().size(), saved.agents.cluster.placement_groups.size());
  }

  ManualWorld world;
  Scheduler scheduler{world, &world, &world};
  SchedulerState saved;
};

TEST_F(StateLoadTest, TheSavedStateLoadsAsItIs) { EXPECT_TRUE(scheduler.load_state(saved).success); }

// A running task carries its agent's actor class (what a strategy tells serving work from
// batch work by), and a loaded state gives it again from the agent.
TEST_F(StateLoadTest, ARunningTaskKnowsItsAgentsActorClassAfterALoadToo) {
  ASSERT_EQ(scheduler.tasks().find(std::string("task-a"))->actor_class, "Worker");
  ASSERT_TRUE(scheduler.load_state(saved).success);
  EXPECT_EQ(scheduler.tasks().find(std::string("task-a"))->actor_class, "Worker");
  EXPECT_EQ(scheduler.tasks().find(std::string("task-b"))->actor_class, "Worker");
}

TEST_F(StateLoadTest, DuplicateTasksAndSequenceNumbersAreRefused) {
  expect_refused([](SchedulerState& s) { s.tasks.push_back(s.tasks.front()); }, "task task-a appears twice");
  expect_refused([](SchedulerState& s) { s.tasks[1].seq = s.tasks[0].seq; }, "shares seq");
  expect_refused([](SchedulerState& s) { s.next_seq = 1; }, "not below next_task_seq");
}

TEST_F(StateLoadTest, AgentsOnMissingPlacementGroupsAndGhostTasksAreRefused) {
  expect_refused([](SchedulerState& s) { s.agents.agents[0].placement_group = 999; }, "placement group");
  expect_refused([](SchedulerState& s) { s.agents.agents[0].task = std::string("ghost"); }, "is not on its agent");
  expect_refused([](SchedulerState& s) { s.tasks.pop_back(); }, "not running");
}

TEST_F(StateLoadTest, ReusedPlacementGroupIdsAreRefused) {
  expect_refused([](SchedulerState& s) { s.agents.cluster.next_pg = 0; }, "not below next_placement_group");
}

TEST_F(StateLoadTest, PoliciesUpdatePreemptionPolicyWouldRefuseAreRefused) {
  expect_refused([](SchedulerState& s) { s.policy.cancel_timeout = -1; }, "cancel_timeout must be a finite number >= 0");
  expect_refused(
      [](SchedulerState& s) {
        s.policy.label_preemption_rules = LabelRules{{"tier", {{"a", {"b"}}, {"b", {"a"}}}}};
      },
      "tier: a -> b -> a");
}

TEST_F(StateLoadTest, APlacementGroupNobodyOwnsIsRefused) {
  expect_refused(
      [](SchedulerState& s) {
        s.agents.agents.pop_back();  // task-b's agent, and task-b with it: its PG stays behind
        s.tasks.pop_back();
      },
      "belongs to no agent, PG pool or kept set");
}

// Issue 8: delete_agent(destroy_pg=false) then shutdown leaked the PG and its node
// resources, and the checker did not see it.
TEST_F(StateLoadTest, KeptPlacementGroupsAreAccountedAndShutdownReleasesThem) {
  ASSERT_TRUE(scheduler.complete("task-a").success);
  const auto agents = scheduler.agents().list_agents();
  ASSERT_FALSE(agents.empty());
  const PgId pg = agents.front()->placement_group;
  const std::string name = agents.front()->spec.name;
  ASSERT_TRUE(scheduler.delete_agent(name, /*force=*/true, /*destroy_pg=*/false).success);
  EXPECT_EQ(scheduler.pg_pools().kept().count(pg), 1u);
  EXPECT_NE(scheduler.cluster().placement_group(pg), nullptr);
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
  // The kept PG survives a save and load.
  const auto state = scheduler.save_state();
  ASSERT_TRUE(scheduler.load_state(state).success);
  EXPECT_EQ(scheduler.pg_pools().kept().count(pg), 1u);
  scheduler.shutdown();
  EXPECT_TRUE(scheduler.cluster().placement_groups().empty());
  EXPECT_TRUE(scheduler.cluster().nodes()[0].ledger.used().is_zero());
  EXPECT_TRUE(scheduler.pg_pools().kept().empty());
}

// Issue 9: completed tasks stayed in the core's tables, so memory grew with job churn.
// They leave and are counted.
TEST_F(StateLoadTest, CompletedTasksLeaveTheTablesAndAreCounted) {
  for (int i = 0; i < 10'000; ++i) {
    const std::string id = "churn-" + std::to_string(i % 3);  // ids may come back once done
    ASSERT_TRUE(scheduler.submit_task_with_preemption(
                            worker(id, ResourceVector::of(1, 512, 1), 1.0))
                    .result.success);
    ASSERT_TRUE(scheduler.complete(id).success);
  }
  EXPECT_EQ(scheduler.save_state().tasks.size(), 2u);  // task-a and task-b, still running
  EXPECT_EQ(summarize(scheduler).tasks.at("completed"), 10'000u);
  EXPECT_EQ(scheduler.get_preemption_stats().completed_tasks, 10'000u);
  EXPECT_EQ(scheduler.tasks().find("churn-0"), nullptr);
  // The count survives a save and load.
  ASSERT_TRUE(scheduler.load_state(scheduler.save_state()).success);
  EXPECT_EQ(summarize(scheduler).tasks.at("completed"), 10'000u);
}

}  // namespace
}  // namespace meshsim::scheduler
