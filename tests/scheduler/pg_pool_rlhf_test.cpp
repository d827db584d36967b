// R1 (spec/scenarios.md, seed 000): the RLHF roles on a pool with a PG pool.
#include <gtest/gtest.h>

#include "scheduler/scheduler.hpp"
#include "scheduler/simple_scheduler.hpp"
#include "scheduler/manual_world.hpp"

namespace meshsim::scheduler {
namespace {

class PgPoolRlhfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scheduler.cluster().add_node({"node-0", ResourceVector::of(8, 16384, 0), {}, "cpu"});
    PgPoolConfig pg_pool;
    pg_pool.enable = true;
    pg_pool.high_priority_pg_specs = {ResourceVector::of(2, 2048, 0), ResourceVector::of(2, 2048, 0)};
    pg_pool.enable_dynamic_pgs = true;
    pg_pool.max_dynamic_pgs = 2;
    pg_pool.enable_pg_reuse = true;
    ASSERT_TRUE(scheduler.ensure_pool({"rlhf-pg-pool", {}, ResourceVector::of(6, 8192, 0), 0,
                                       PlacementStrategy::kStrictPack},
                                      pg_pool));
    PolicyUpdate policy;
    policy.enable_label_preemption = true;
    policy.label_preemption_rules = LabelRules{{"role", {{"train", {"reward", "rollout"}}, {"reward", {"rollout"}}}}};
    policy.preemption_aggressiveness = "MEDIUM";
    policy.cancel_timeout = 0.5;
    policy.enable_cross_pool_preemption = false;
    ASSERT_TRUE(scheduler.update_preemption_policy(policy).result.success);
  }
  void TearDown() override { EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{}); }

  static TaskSpec role(const std::string& id, const std::string& role_name, double priority, double cpu, double memory) {
    return TaskSpec{{priority, {{"role", role_name}}, 25.0, "", 0.0}, id, "rlhf-pg-pool", "RLHFWorker",
                    ResourceVector::of(cpu, memory, 0), ""};
  }
  PgPoolStats pg_stats() const { return scheduler.pg_pools().stats().at("rlhf-pg-pool"); }

  ManualWorld world;
  Scheduler scheduler{world, &world, &world};
};

TEST_F(PgPoolRlhfTest, R1ScenesPreemptOnceThenTwiceAndCleanUpToZero) {
  // Scene 1: rollouts on dynamic PGs; the reserved PGs stay free.
  ASSERT_TRUE(scheduler.submit_with_pg_preemption(role("rollout-00", "rollout", 1.0, 1.5, 2048)).result.success);
  world.advance(1.0);  // rollout-01 starts later: more work remains, so it scores higher as a victim
  ASSERT_TRUE(scheduler.submit_with_pg_preemption(role("rollout-01", "rollout", 1.0, 1.5, 2048)).result.success);
  EXPECT_EQ(pg_stats().dynamic_in_use, 2u);
  EXPECT_EQ(pg_stats().reserved_in_use, 0u);
  EXPECT_EQ(pg_stats().reserved_total, 2u);

  // Scene 2: reward takes a reserved PG; nothing is preempted.
  world.advance(1.0);
  const auto reward = scheduler.submit_with_pg_preemption(role("reward-00", "reward", 5.0, 2, 2048));
  ASSERT_TRUE(reward.result.success) << reward.result.error;
  EXPECT_TRUE(reward.preempted.empty());
  EXPECT_EQ(pg_stats().reserved_in_use, 1u);
  EXPECT_EQ(scheduler.get_preemption_stats().total_preemptions, 0u);

  // Scene 3: train's PG path fails on the pool quota, with no side effects ...
  world.advance(1.0);
  const TaskSpec train = role("train-00", "train", 9.0, 2, 2048);
  const auto pg_path = scheduler.submit_with_pg_preemption(train);
  EXPECT_FALSE(pg_path.result.success);
  EXPECT_NE(pg_path.result.error.find("quota is short"), std::string::npos) << pg_path.result.error;
  EXPECT_EQ(scheduler.get_preemption_stats().running_tasks, 3u);
  // ... and the fallback preempts reward-00, whose reserved PG fits train exactly.
  const PgId reward_pg = scheduler.agents().agent("reward-00")->placement_group;
  const auto fallback = scheduler.submit_task_with_preemption(train);
  ASSERT_TRUE(fallback.result.success) << fallback.result.error;
  EXPECT_EQ(scheduler.tasks().names(fallback.preempted), std::vector<std::string>{"reward-00"});
  EXPECT_EQ(fallback.placement_group, reward_pg);
  EXPECT_TRUE(fallback.pg_reused);
  EXPECT_EQ(scheduler.get_preemption_stats().total_preemptions, 1u);
  EXPECT_EQ(scheduler.get_preemption_stats().label_preemptions, 1u);

  // Scene 4: a scale-out rollout, a full priority step above the others, preempts the
  // younger rollout and reuses its dynamic PG.
  world.advance(1.0);
  const PgId rollout_pg = scheduler.agents().agent("rollout-01")->placement_group;
  const auto extra = scheduler.submit_task_with_preemption(role("rollout-extra-00", "rollout", 2.0, 1.5, 2048));
  ASSERT_TRUE(extra.result.success) << extra.result.error;
  EXPECT_EQ(scheduler.tasks().names(extra.preempted), std::vector<std::string>{"rollout-01"});
  EXPECT_EQ(extra.placement_group, rollout_pg);
  const auto stats = scheduler.get_preemption_stats();
  EXPECT_EQ(stats.total_preemptions, 2u);
  EXPECT_EQ(stats.same_pool_preemptions, 1u);
  EXPECT_EQ(stats.recent_preemptions[0].task_id, "rollout-01");
  EXPECT_EQ(pg_stats().reuse_hits, 2u);
  EXPECT_EQ(pg_stats().dynamic_created, 2u);

  // Cleanup: complete, then shutdown destroys every PG; ledgers return to zero.
  for (const char* id : {"rollout-00", "train-00", "rollout-extra-00"}) ASSERT_TRUE(scheduler.complete(id));
  scheduler.shutdown();
  EXPECT_TRUE(scheduler.cluster().placement_groups().empty());
  EXPECT_TRUE(scheduler.cluster().nodes()[0].ledger.used().is_zero());
  EXPECT_TRUE(scheduler.agents().pool("rlhf-pg-pool")->ledger.used().is_zero());
  EXPECT_EQ(pg_stats().reserved_total, 0u);
}

}  // namespace
}  // namespace meshsim::scheduler


namespace meshsim::scheduler {
namespace {

// The same roles through SimpleScheduler::submit, which tries the PG path and falls back
// to preemption by itself.
TEST_F(PgPoolRlhfTest, SimpleSchedulerFallsBackFromThePgPathOnItsOwn) {
  SimpleScheduler simple(scheduler);
  ASSERT_TRUE(simple.submit(role("rollout-00", "rollout", 1.0, 1.5, 2048)).result.success);
  world.advance(1.0);
  ASSERT_TRUE(simple.submit(role("rollout-01", "rollout", 1.0, 1.5, 2048)).result.success);
  ASSERT_TRUE(simple.submit(role("reward-00", "reward", 5.0, 2, 2048)).result.success);
  const auto train = simple.submit(role("train-00", "train", 9.0, 2, 2048));
  ASSERT_TRUE(train.result.success) << train.result.error;
  EXPECT_EQ(scheduler.tasks().names(train.preempted), std::vector<std::string>{"reward-00"});
  ASSERT_TRUE(simple.complete("train-00"));
  const auto stats = simple.stats();
  EXPECT_EQ(stats.pools.at("rlhf-pg-pool").running_tasks, 2u);
  EXPECT_EQ(stats.tasks.at("preempted"), 1u);
  EXPECT_EQ(stats.tasks.at("completed"), 1u);
}

// A pooled placement group is the PG pool's to hand out: an agent put there by hand would
// share it with the next task the pool places (two agents in one bundle).
TEST_F(PgPoolRlhfTest, AnAgentCannotBeCreatedByHandInAPooledPlacementGroup) {
  ASSERT_TRUE(scheduler.submit_with_pg_preemption(role("rollout-00", "rollout", 1.0, 1.5, 2048)).result.success);
  const PgId pooled = scheduler.agents().agent("rollout-00")->placement_group;
  ASSERT_TRUE(scheduler.complete("rollout-00"));  // the PG goes back to the pool, idle
  const OpResult created =
      scheduler.create_agent({"by-hand", "rlhf-pg-pool", "worker", ResourceVector::of(1, 1024, 0), pooled, 0});
  EXPECT_FALSE(created.success);
  EXPECT_NE(created.error.find("belongs to the PG pool of 'rlhf-pg-pool'"), std::string::npos) << created.error;
  EXPECT_EQ(scheduler.agents().agent("by-hand"), nullptr);
}

}  // namespace
}  // namespace meshsim::scheduler

namespace meshsim::scheduler {
namespace {

// Found by the random scripts of tests/tools/script_digest_test.py: delete_agent without
// destroy_pg, on an agent in a PG of a PG pool, left that PG marked in use with no agent in
// it (an invariant broken), and the PG pool never handed it out again. Kept, a pooled PG
// goes back to its PG pool, as when the agent's task ends.
TEST_F(PgPoolRlhfTest, AnAgentDeletedWithoutDestroyingItsPooledPgGivesThePgBackToItsPool) {
  ASSERT_TRUE(scheduler.submit_with_pg_preemption(role("rollout-00", "rollout", 1.0, 1.5, 2048)).result.success);
  const PgId pooled = scheduler.agents().agent("rollout-00")->placement_group;
  ASSERT_TRUE(scheduler.delete_agent("rollout-00", /*force=*/true, /*destroy_pg=*/false));
  EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
  EXPECT_EQ(pg_stats().dynamic_in_use, 0u);
  EXPECT_TRUE(scheduler.pg_pools().kept().empty()) << "the PG pool keeps its own PGs";
  const auto again = scheduler.submit_with_pg_preemption(role("rollout-01", "rollout", 1.0, 1.5, 2048));
  ASSERT_TRUE(again.result.success);
  EXPECT_EQ(again.placement_group, std::optional<PgId>(pooled)) << "handed out again";
}

}  // namespace
}  // namespace meshsim::scheduler
