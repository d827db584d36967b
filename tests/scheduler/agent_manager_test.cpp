#include "scheduler/agent_manager.hpp"

#include <gtest/gtest.h>

#include "scheduler/capacity_holds.hpp"
#include "scheduler/manual_world.hpp"

namespace meshsim::scheduler {
namespace {

// Two 8-GPU nodes and a pool of 4 GPUs (pool quota binds before node capacity).
class AgentManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scheduler.cluster().add_node({"n0", ResourceVector::of(64, 512'000, 8), {}, "h100-80gb"});
    scheduler.cluster().add_node({"n1", ResourceVector::of(64, 512'000, 8), {}, "h100-80gb"});
    ASSERT_TRUE(scheduler.create_pool({"compute-pool", {}, ResourceVector::of(16, 65'536, 4), 0,
                                       PlacementStrategy::kStrictPack}));
  }
  void TearDown() override { EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{}); }

  static AgentSpec agent(const std::string& name, double gpus) {
    return AgentSpec{name, "compute-pool", "worker", ResourceVector::of(4 * gpus, 16'384 * gpus, gpus), {}, 0};
  }

  AgentManager scheduler;
};

TEST_F(AgentManagerTest, AnAgentChargesItsPoolAndHoldsNodeResourcesThroughItsPlacementGroup) {
  ASSERT_TRUE(scheduler.create_agent(agent("agent-1", 2)));
  EXPECT_EQ(scheduler.pool("compute-pool")->ledger.used(), ResourceVector::of(8, 32'768, 2));
  const Agent* a = scheduler.agent("agent-1");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->owns_placement_group);
  EXPECT_EQ(scheduler.cluster().nodes()[a->node].ledger.used(), ResourceVector::of(8, 32'768, 2));
  EXPECT_EQ(scheduler.list_agents("compute-pool").size(), 1u);
  EXPECT_TRUE(scheduler.list_agents("other").empty());
}

TEST_F(AgentManagerTest, AgentsGetDenseIdsThatAGoneAgentsSlotPassesOn) {
  ASSERT_TRUE(scheduler.create_agent(agent("agent-1", 1)));
  ASSERT_TRUE(scheduler.create_agent(agent("agent-2", 1)));
  const AgentId first = scheduler.agent("agent-1")->id;
  const AgentId second = scheduler.agent("agent-2")->id;
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(second, 1u);
  EXPECT_EQ(scheduler.agent(second)->spec.name, "agent-2");
  ASSERT_TRUE(scheduler.delete_agent(first));
  // The id no longer names an agent, and the name is free.
  EXPECT_EQ(scheduler.agent(first), nullptr);
  EXPECT_EQ(scheduler.agent("agent-1"), nullptr);
  EXPECT_FALSE(scheduler.delete_agent(first).success);
  EXPECT_EQ(scheduler.agent(kNoAgent), nullptr);
  // The next agent takes the freed slot; the other keeps its id.
  ASSERT_TRUE(scheduler.create_agent(agent("agent-3", 1)));
  EXPECT_EQ(scheduler.agent("agent-3")->id, first);
  EXPECT_EQ(scheduler.agent(first)->spec.name, "agent-3");
  EXPECT_EQ(scheduler.agent("agent-2")->id, second);
  EXPECT_EQ(scheduler.list_agents().size(), 2u);
}

TEST_F(AgentManagerTest, AnAgentBeyondThePoolQuotaFailsAndChangesNothing) {
  ASSERT_TRUE(scheduler.create_agent(agent("agent-1", 3)));
  const auto result = scheduler.create_agent(agent("agent-2", 2));
  EXPECT_FALSE(result.success);
  EXPECT_NE(result.error.find("create_agent 'agent-2': pool 'compute-pool' quota: insufficient resources"),
            std::string::npos)
      << result.error;
  EXPECT_EQ(scheduler.pool("compute-pool")->ledger.used(), ResourceVector::of(12, 49'152, 3));
  EXPECT_TRUE(scheduler.pool("compute-pool")->ledger.reserved().is_zero());
  EXPECT_EQ(scheduler.cluster().placement_groups().size(), 1u);
}

TEST_F(AgentManagerTest, AnAgentThatFitsNoNodeRollsBackItsPoolReservation) {
  ASSERT_TRUE(scheduler.ensure_pool({"big-pool", {}, ResourceVector::of(256, 2'048'000, 32), 0,
                                     PlacementStrategy::kStrictPack}));
  const auto result =
      scheduler.create_agent(AgentSpec{"huge", "big-pool", "worker", ResourceVector::of(4, 1000, 9), {}, 0});
  EXPECT_FALSE(result.success);
  EXPECT_TRUE(scheduler.pool("big-pool")->ledger.reserved().is_zero());
  EXPECT_TRUE(scheduler.pool("big-pool")->ledger.used().is_zero());
  EXPECT_TRUE(scheduler.cluster().placement_groups().empty());
}

TEST_F(AgentManagerTest, DeletingAnAgentFreesPoolAndNodes) {
  ASSERT_TRUE(scheduler.create_agent(agent("agent-1", 2)));
  ASSERT_TRUE(scheduler.delete_agent("agent-1"));
  EXPECT_TRUE(scheduler.pool("compute-pool")->ledger.used().is_zero());
  EXPECT_TRUE(scheduler.cluster().placement_groups().empty());
  EXPECT_TRUE(scheduler.cluster().nodes()[0].ledger.used().is_zero());
  EXPECT_FALSE(scheduler.delete_agent("agent-1"));
}

TEST_F(AgentManagerTest, AgentsCanUseAReservedPlacementGroupWhichOutlivesThem) {
  // A PG reserved up front holds node resources before any agent uses it (Ray semantics);
  // the pool is charged only when an agent is committed into it.
  auto pg = scheduler.cluster().create_placement_group("reserved", {ResourceVector::of(8, 32'768, 2)},
                                                       PlacementStrategy::kStrictPack, false);
  ASSERT_TRUE(pg.result.success);
  EXPECT_TRUE(scheduler.pool("compute-pool")->ledger.used().is_zero());
  AgentSpec spec = agent("trainer", 2);
  spec.placement_group = *pg.id;
  ASSERT_TRUE(scheduler.create_agent(spec));
  EXPECT_FALSE(scheduler.agent("trainer")->owns_placement_group);
  EXPECT_EQ(scheduler.cluster().placement_groups().size(), 1u);
  ASSERT_TRUE(scheduler.delete_agent("trainer", false, /*destroy_pg=*/false));
  EXPECT_NE(scheduler.cluster().placement_group(*pg.id), nullptr);  // kept for reuse
  EXPECT_TRUE(scheduler.pool("compute-pool")->ledger.used().is_zero());
  AgentSpec too_big = agent("too-big", 3);
  too_big.placement_group = *pg.id;
  const auto refused = scheduler.create_agent(too_big);
  EXPECT_FALSE(refused.success);
  EXPECT_TRUE(scheduler.pool("compute-pool")->ledger.reserved().is_zero());
  ASSERT_TRUE(scheduler.cluster().remove_placement_group(*pg.id));
}

TEST_F(AgentManagerTest, EnsurePoolCreatesOrUpdatesButNeverShrinksBelowUse) {
  ASSERT_TRUE(scheduler.create_agent(agent("agent-1", 2)));
  EXPECT_FALSE(scheduler.create_pool({"compute-pool", {}, ResourceVector::of(1, 1, 1), 0, PlacementStrategy::kPack}));
  ASSERT_TRUE(scheduler.ensure_pool({"compute-pool", {{"tier", "gold"}}, ResourceVector::of(32, 131'072, 8), 2,
                                     PlacementStrategy::kPack}));
  EXPECT_EQ(scheduler.pool("compute-pool")->spec.labels.at("tier"), "gold");
  EXPECT_EQ(scheduler.pool("compute-pool")->ledger.capacity(), ResourceVector::of(32, 131'072, 8));
  const auto shrink = scheduler.ensure_pool({"compute-pool", {}, ResourceVector::of(4, 1000, 1), 0,
                                             PlacementStrategy::kPack});
  EXPECT_FALSE(shrink.success);
  EXPECT_EQ(scheduler.pool("compute-pool")->ledger.capacity(), ResourceVector::of(32, 131'072, 8));
}

TEST_F(AgentManagerTest, AnIdleAgentIsFoundHeldForTheTaskFirstThenUnheldByName) {
  for (const char* name : {"c", "b", "a"}) ASSERT_TRUE(scheduler.create_agent(agent(name, 1)));
  const ResourceVector one_gpu = ResourceVector::of(4, 16'384, 1);
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "t")->spec.name, "a");
  EXPECT_EQ(scheduler.find_idle("compute-pool", ResourceVector::of(8, 32'768, 2), "t"), nullptr);  // none fits
  scheduler.agent("a")->held_for = "other";
  scheduler.agent("c")->held_for = "t";
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "t")->spec.name, "c");
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "u")->spec.name, "b");
  // A busy agent is not idle; it is again once its task leaves, and not once it is gone.
  scheduler.assign_task(*scheduler.agent("b"), "job");
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "u"), nullptr);
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
  scheduler.clear_task(*scheduler.agent("b"));
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "u")->spec.name, "b");
  ASSERT_TRUE(scheduler.delete_agent("b"));
  EXPECT_EQ(scheduler.find_idle("compute-pool", one_gpu, "u"), nullptr);
  EXPECT_EQ(scheduler.find_idle("no-pool", one_gpu, "u"), nullptr);
}

TEST_F(AgentManagerTest, AHoldLapsesAtItsTimeUnlessEndedOrArmedAgain) {
  ManualWorld world;
  std::vector<std::string> lapsed;
  CapacityHolds holds(&world, scheduler, [&](Agent& a) { lapsed.push_back(a.spec.name); });
  ASSERT_TRUE(scheduler.create_agent(agent("a", 1)));
  ASSERT_TRUE(scheduler.create_agent(agent("b", 1)));
  Agent& a = *scheduler.agent("a");
  Agent& b = *scheduler.agent("b");
  a.held_for = "p";
  holds.arm(a, SimTime::from_seconds(10.0));
  b.held_for = "q";
  holds.arm(b, SimTime::from_seconds(5.0));
  holds.arm(b, SimTime::from_seconds(20.0));  // armed again: the first timer is stale
  world.advance(9.0);
  EXPECT_TRUE(lapsed.empty());
  holds.end(a);  // its preemptor came: no lapse
  EXPECT_TRUE(a.held_for.empty());
  world.advance(5.0);
  EXPECT_TRUE(lapsed.empty());
  world.advance(10.0);
  EXPECT_EQ(lapsed, std::vector<std::string>{"b"});
  EXPECT_TRUE(b.held_for.empty());
}

}  // namespace
}  // namespace meshsim::scheduler
