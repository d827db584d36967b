#include "scheduler/scheduling_strategy.hpp"

#include <gtest/gtest.h>

#include <random>

#include "scheduler/scheduler.hpp"
#include "scheduler/manual_world.hpp"

namespace meshsim::scheduler {
namespace {

class SchedulingStrategyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scheduler.cluster().add_node({"busy", ResourceVector::of(64, 262'144, 8), {{"zone", "b"}}, "h100"});
    scheduler.cluster().add_node({"empty", ResourceVector::of(64, 262'144, 8), {{"zone", "a"}}, "h100"});
    ASSERT_TRUE(scheduler.create_pool({"pool", {}, ResourceVector::of(128, 524'288, 16), 0, PlacementStrategy::kStrictPack}));
    ASSERT_TRUE(scheduler.submit_task_with_preemption(task("filler", 4, 1.0)).result.success);
    ASSERT_EQ(node_of("filler"), "busy");  // binpack on empty nodes: the first
  }
  void TearDown() override { EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{}); }

  static TaskSpec task(const std::string& id, double gpus, double priority) {
    TaskSpec spec;
    spec.task_id = id;
    spec.pool = "pool";
    spec.actor_class = "w";
    spec.resources = ResourceVector::of(8 * gpus, 32'768 * gpus, gpus);
    spec.priority = priority;
    return spec;
  }
  std::string node_of(const std::string& agent) const {
    return scheduler.cluster().nodes()[scheduler.agents().agent(agent)->node].spec.name;
  }

  ManualWorld world;
  Scheduler scheduler{world, &world, &world};
};

TEST_F(SchedulingStrategyTest, BinpackFillsTheBusiestNodeAndSpreadTheEmptiest) {
  ASSERT_TRUE(scheduler.submit_task_with_preemption(task("packed", 2, 1.0)).result.success);
  EXPECT_EQ(node_of("packed"), "busy");
  scheduler.set_scheduling_strategy(std::move(*make_scheduling_strategy("spread")));
  ASSERT_TRUE(scheduler.submit_task_with_preemption(task("spread", 2, 1.0)).result.success);
  EXPECT_EQ(node_of("spread"), "empty");
  EXPECT_EQ(scheduler.scheduling_strategy().name(), "spread");
}

TEST_F(SchedulingStrategyTest, UnknownNamesAreErrorsListingTheBuiltIns) {
  const auto strategy = make_scheduling_strategy("random");
  ASSERT_FALSE(strategy);
  EXPECT_NE(strategy.error().message.find("not one of 'binpack', 'spread'"), std::string::npos);
}

// A plugin of its own: prefers zone a by score, boosts "urgent" tasks, never preempts
// tasks labelled keep=yes.
class ZonePlugin final : public SchedulingStrategy {
 public:
  std::string_view name() const override { return "zone-a"; }
  double score(const ResourceVector&, const Node& node) const override {
    return node.spec.labels.count("zone") != 0 && node.spec.labels.at("zone") == "a" ? 1.0 : 0.0;
  }
  double priority(const TaskSpec& task) const override { return task.priority + (task.labels.count("urgent") ? 10 : 0); }
  bool should_preempt(const IncomingTask&, const Task& victim) const override { return victim.labels.count("keep") == 0; }
};

TEST_F(SchedulingStrategyTest, APluginChoosesNodesSetsPrioritiesAndVetoesPreemptions) {
  scheduler.set_scheduling_strategy(std::make_unique<ZonePlugin>());
  TaskSpec kept = task("kept", 8, 1.0);
  kept.labels = {{"keep", "yes"}};
  kept.estimated_duration = 1000.0;  // the most work left: the policy's favourite victim
  ASSERT_TRUE(scheduler.submit_task_with_preemption(kept).result.success);
  EXPECT_EQ(node_of("kept"), "empty");  // zone a by score
  ASSERT_TRUE(scheduler.submit_task_with_preemption(task("plain", 3, 1.0)).result.success);
  // The pool has 16 GPUs, 15 used: an urgent 3-GPU task (priority 1 + 10) must preempt.
  // The policy would take "kept" (highest score); the plugin vetoes it, so the oldest of
  // the others goes.
  TaskSpec urgent = task("urgent", 3, 1.0);
  urgent.labels = {{"urgent", "1"}};
  const auto result = scheduler.submit_task_with_preemption(urgent);
  ASSERT_TRUE(result.result.success) << result.result.error;
  EXPECT_EQ(scheduler.tasks().names(result.preempted), std::vector<std::string>{"filler"});
  EXPECT_EQ(scheduler.tasks().find("kept")->state, TaskState::kRunning);
  EXPECT_DOUBLE_EQ(scheduler.tasks().find("urgent")->priority, 11.0);
}

// Worst fit through the index equals a scan for the node with the most free (gpu, cpu,
// memory) that fits, highest index on ties.
TEST(ClusterStateTest, WorstFitThroughTheIndexMatchesAScan) {
  std::mt19937_64 rng(3);
  ClusterState cluster;
  cluster.set_node_order(NodeOrder::kWorstFit);
  for (int i = 0; i < 100; ++i) cluster.add_node({"n" + std::to_string(i), ResourceVector::of(32, 65536, 8), {}, "x"});
  for (int step = 0; step < 500; ++step) {
    const ResourceVector need = ResourceVector::of(1 + rng() % 8, 1024, rng() % 4);
    std::optional<std::uint32_t> expected;
    for (std::uint32_t i = 0; i < cluster.nodes().size(); ++i) {
      const ResourceVector free = cluster.nodes()[i].ledger.available();
      if (!need.fits_in(free)) continue;
      if (!expected) {
        expected = i;
        continue;
      }
      const ResourceVector best = cluster.nodes()[*expected].ledger.available();
      if (std::make_tuple(free.gpu_milli(), free.cpu_milli(), free.memory_milli()) >=
          std::make_tuple(best.gpu_milli(), best.cpu_milli(), best.memory_milli())) {
        expected = i;
      }
    }
    const auto pg = cluster.create_placement_group("pg", {need}, PlacementStrategy::kStrictPack, false);
    ASSERT_EQ(pg.ready, expected.has_value());
    if (pg.ready) {
      EXPECT_EQ(cluster.placement_group(*pg.id)->nodes[0], *expected) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace meshsim::scheduler
