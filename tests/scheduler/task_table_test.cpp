// Task ids (scheduler/ids.hpp): the task table against a slow twin that knows only
// names, and a submit's ids against the names the core prints.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "scheduler/manual_world.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/task_table.hpp"

namespace meshsim::scheduler {
namespace {

// Random starts (new names and names the table holds), stops and erasures, and a
// restore now and then: after every call each task the twin holds is found by its id
// and its name as the same record; a name keeps its id while the table holds it; an
// erased id is reused only by a name that is new; ids stay dense (never more ids than
// the most tasks held at once).
TEST(TaskTableTest, IdsFindTheTaskOfTheirNameAndAreReusedOnlyOnceItLeaves) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    std::mt19937_64 rng(seed);
    const auto draw = [&rng](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    TaskTable table;
    std::map<std::string, TaskId> twin;  // name -> the id it was given
    std::size_t most = 0;
    for (int call = 0; call < 300; ++call) {
      const std::string name = "t" + std::to_string(draw(12));
      const Task* held = table.find(name);
      switch (draw(5)) {
        case 0:
        case 1: {  // start: a replaced task keeps its id, a new name takes a free or new one
          if (held != nullptr && held->state == TaskState::kRunning) table.stop(*held);  // as the core does
          Task task;
          task.id = name;
          const TaskId id = table.start(std::move(task), SimTime::from_seconds(call)).handle;
          if (twin.count(name) != 0) {
            ASSERT_EQ(id, twin[name]) << "seed " << seed << " call " << call;
          }
          for (const auto& [other, other_id] : twin) {
            if (other != name) {
              ASSERT_NE(id, other_id) << "seed " << seed << " call " << call;
            }
          }
          twin[name] = id;
          break;
        }
        case 2:
          if (held != nullptr && held->state == TaskState::kRunning) {
            table.stop(*held);
            table.find(name)->state = TaskState::kPreempted;
          }
          break;
        case 3:
          if (held != nullptr) {
            if (held->state == TaskState::kRunning) table.stop(*held);
            table.erase(*held);
            twin.erase(name);
          }
          break;
        default:
          if (draw(10) == 0) {  // a state loaded back: ids in name order
            std::vector<Task> saved;
            for (const Task* task : table.by_name()) saved.push_back(*task);
            table.restore(saved, table.next_seq());
            TaskId next = 0;
            for (auto& [n, id] : twin) id = next++;
          }
      }
      most = std::max(most, twin.size());
      ASSERT_EQ(table.check_invariants(), std::vector<std::string>{}) << "seed " << seed << " call " << call;
      ASSERT_EQ(table.size(), twin.size());
      for (const auto& [n, id] : twin) {
        ASSERT_NE(table.find(id), nullptr) << "seed " << seed << " call " << call << ": " << n;
        ASSERT_EQ(table.find(id), table.find(n)) << "seed " << seed << " call " << call << ": " << n;
        ASSERT_LT(id, most) << "seed " << seed << " call " << call << ": ids are not dense";
      }
    }
  }
}

TEST(TaskTableTest, ASubmitReturnsTheIdsOfItsTaskAgentNodeAndVictims) {
  ManualWorld world;
  Scheduler core(world, &world);
  core.cluster().add_node({"node-0", ResourceVector::of(8, 16384, 0), {}, "cpu"});
  core.cluster().add_node({"node-1", ResourceVector::of(8, 16384, 0), {}, "cpu"});
  ASSERT_TRUE(core.ensure_pool({"pool", {}, ResourceVector::of(16, 32768, 0), 0, PlacementStrategy::kStrictPack}));
  for (const char* name : {"low-a", "low-b"}) {
    const TaskSpec low{{1.0, {}, 0.0, "", 0.0}, name, "pool", "w", ResourceVector::of(8, 1024, 0), ""};
    const auto placed = core.submit_task_with_preemption(low);
    ASSERT_TRUE(placed.result.success) << placed.result.error;
    const Task* task = core.tasks().find(placed.task);
    ASSERT_NE(task, nullptr);
    EXPECT_EQ(task->id, name);
    EXPECT_EQ(task->agent, placed.agent_name);
    EXPECT_EQ(placed.agent, core.agents().agent(placed.agent_name)->id);
    EXPECT_EQ(placed.node, core.agents().agent(placed.agent_name)->node);
  }
  world.advance(60.0);
  const TaskSpec high{{9.0, {}, 0.0, "", 0.0}, "high", "pool", "w", ResourceVector::of(8, 1024, 0), ""};
  const auto placed = core.submit_task_with_preemption(high);
  ASSERT_TRUE(placed.result.success) << placed.result.error;
  ASSERT_EQ(placed.preempted.size(), 1u);
  const Task* victim = core.tasks().find(placed.preempted[0]);
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(victim->state, TaskState::kPreempted);
  EXPECT_EQ(core.tasks().names(placed.preempted), std::vector<std::string>{victim->id});
  // Completing by id frees the id; the next new name takes it.
  ASSERT_TRUE(core.complete(placed.task).success);
  EXPECT_EQ(core.tasks().find(placed.task), nullptr);
  EXPECT_FALSE(core.complete(placed.task).success);
  const TaskSpec next{{1.0, {}, 0.0, "", 0.0}, "next", "pool", "w", ResourceVector::of(8, 1024, 0), ""};
  EXPECT_EQ(core.submit_task_with_preemption(next).task, placed.task);
  EXPECT_EQ(core.check_invariants(), std::vector<std::string>{});
}

}  // namespace
}  // namespace meshsim::scheduler
