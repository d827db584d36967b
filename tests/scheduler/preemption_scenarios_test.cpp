// The preemption guide's scenarios (spec/scenarios.md P1-P13, seed 001), each against the
// scheduling core alone, with a fake clock and fake agents.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "scheduler/scheduler.hpp"
#include "scheduler/manual_world.hpp"

namespace meshsim::scheduler {
namespace {

class PreemptionScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scheduler.cluster().add_node({"node-0", ResourceVector::of(64, 262'144, 8), {}, "h100-80gb"});
  }
  void TearDown() override { EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{}); }

  void pool(const std::string& name, double cpu = 4, double memory = 8192) {
    ASSERT_TRUE(scheduler.ensure_pool({name, {}, ResourceVector::of(cpu, memory, 0), 0, PlacementStrategy::kStrictPack}));
  }
  // An agent of 1 cpu / 1024 MB running `task` at `priority`.
  void running(const std::string& task, const std::string& pool_name, double priority, Labels labels = {},
               double estimated_duration = 0.0) {
    const std::string agent = "agent-" + task;
    ASSERT_TRUE(scheduler.create_agent({agent, pool_name, "worker", ResourceVector::of(1, 1024, 0), {}, 0}));
    ASSERT_TRUE(scheduler.register_running_task(
        {{priority, std::move(labels), estimated_duration, "payload of " + task, 0.0}, task, agent, pool_name}));
    EXPECT_EQ(scheduler.check_invariants(), std::vector<std::string>{});
  }
  PreemptionEvaluation evaluate(double priority, const std::string& pool_name, Labels labels = {}) {
    return scheduler.evaluate_preemption({priority, pool_name, std::move(labels)});
  }
  void update(const PolicyUpdate& update) { ASSERT_TRUE(scheduler.update_preemption_policy(update).result.success); }

  ManualWorld world;
  Scheduler scheduler{world, &world, &world};
};

TEST_F(PreemptionScenarioTest, P1BasicFlowScoresSavesAndFrees) {
  pool("compute-pool");
  running("low-priority-job", "compute-pool", 1.0, {{"pool", "compute-pool"}}, 60.0);
  world.advance(10.0);  // 50 s remain
  const auto evaluation = evaluate(5.0, "compute-pool");
  ASSERT_TRUE(evaluation.should_preempt);
  ASSERT_EQ(evaluation.candidates.size(), 1u);
  const auto& first = evaluation.candidates[0];
  EXPECT_EQ(first.task_id, "low-priority-job");
  EXPECT_EQ(first.agent_name, "agent-low-priority-job");
  EXPECT_NEAR(first.preempt_score, 4.0 + 0.1 * 50.0, 1e-9);
  EXPECT_EQ(first.reason, PreemptReason::kSamePool);

  const auto outcome = scheduler.execute_preemption(first.task_id, first.agent_name);
  ASSERT_TRUE(outcome.result.success) << outcome.result.error;
  EXPECT_TRUE(outcome.cancel_success);
  ASSERT_TRUE(outcome.saved_state);
  EXPECT_EQ(outcome.saved_state->task_id, "low-priority-job");
  EXPECT_EQ(outcome.saved_state->payload, "payload of low-priority-job");
  EXPECT_DOUBLE_EQ(outcome.saved_state->elapsed, 10.0);
  EXPECT_EQ(scheduler.tasks().find("low-priority-job")->state, TaskState::kPreempted);
  // The agent is free for the high-priority work.
  EXPECT_FALSE(scheduler.agents().agent("agent-low-priority-job")->task);
  EXPECT_EQ(world.cancels, std::vector<std::string>{"agent-low-priority-job/low-priority-job"});
}

TEST_F(PreemptionScenarioTest, P2SamePoolNeedsTheSamePoolThreshold) {
  pool("compute-pool");
  running("batch-job", "compute-pool", 1.0);
  const auto yes = evaluate(3.0, "compute-pool");
  ASSERT_TRUE(yes.should_preempt);
  EXPECT_EQ(yes.candidates[0].reason, PreemptReason::kSamePool);
  EXPECT_FALSE(evaluate(1.5, "compute-pool").should_preempt);  // delta 0.5 < 1.0
}

TEST_F(PreemptionScenarioTest, P3CrossPoolNeedsTheCrossPoolThresholdAndTheSwitch) {
  pool("compute-pool");
  pool("premium-pool", 2, 4096);
  running("standard-job", "compute-pool", 2.0);
  const auto yes = evaluate(10.0, "premium-pool");
  ASSERT_TRUE(yes.should_preempt);
  EXPECT_EQ(yes.candidates[0].reason, PreemptReason::kCrossPool);
  EXPECT_FALSE(evaluate(6.0, "premium-pool").should_preempt);  // delta 4 < 5
  PolicyUpdate off;
  off.enable_cross_pool_preemption = false;
  update(off);
  EXPECT_FALSE(evaluate(10.0, "premium-pool").should_preempt);
}

TEST_F(PreemptionScenarioTest, P4ProtectedPoolsAreNeverVictimsOfOtherPools) {
  pool("production-pool");
  pool("other-pool");
  PolicyUpdate protect;
  protect.protected_pools = std::vector<std::string>{"production-pool", "critical-services"};
  protect.label_preemption_rules = LabelRules{{"tier", {{"premium", {"standard"}}}}};
  update(protect);
  running("prod-service", "production-pool", 5.0, {{"tier", "standard"}});
  EXPECT_FALSE(evaluate(100.0, "other-pool").should_preempt);
  EXPECT_FALSE(evaluate(100.0, "other-pool", {{"tier", "premium"}}).should_preempt);  // not by a label rule either
  // From inside the protected pool, the same-pool rule still applies.
  const auto inside = evaluate(7.0, "production-pool");
  ASSERT_TRUE(inside.should_preempt);
  EXPECT_EQ(inside.candidates[0].task_id, "prod-service");
}

TEST_F(PreemptionScenarioTest, P5LabelTiersPreemptAtEqualPriority) {
  pool("compute-pool");
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{{"tier", {{"premium", {"standard", "batch"}}, {"standard", {"batch"}}}}};
  rules.label_priority_threshold = 0.5;
  update(rules);
  running("batch-job", "compute-pool", 5.0, {{"tier", "batch"}});
  const auto evaluation = evaluate(5.0, "compute-pool", {{"tier", "premium"}});
  ASSERT_TRUE(evaluation.should_preempt);
  EXPECT_EQ(evaluation.candidates[0].reason, PreemptReason::kLabel);
  EXPECT_DOUBLE_EQ(evaluation.candidates[0].preempt_score, 0.5);  // max(0, 0.5) + 0.1 x 0
  // The rule is one-way: batch cannot preempt premium work.
  running("premium-job", "compute-pool", 5.0, {{"tier", "premium"}});
  const auto reverse = evaluate(5.0, "compute-pool", {{"tier", "batch"}});
  EXPECT_FALSE(reverse.should_preempt);
}

TEST_F(PreemptionScenarioTest, P6LabelRulesCrossPoolsBelowTheCrossPoolThreshold) {
  pool("pool-a");
  pool("pool-b");
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{{"tier", {{"premium", {"standard"}}}}};
  rules.label_priority_threshold = 0.5;
  rules.cross_pool_priority_threshold = 10.0;
  update(rules);
  running("standard-in-a", "pool-a", 5.0, {{"tier", "standard"}});
  const auto evaluation = evaluate(7.0, "pool-b", {{"tier", "premium"}});
  ASSERT_TRUE(evaluation.should_preempt);
  EXPECT_EQ(evaluation.candidates[0].reason, PreemptReason::kLabel);
  EXPECT_FALSE(evaluate(7.0, "pool-b").should_preempt);  // pool rules alone: delta 2 < 10
}

TEST_F(PreemptionScenarioTest, P7LabelDominanceBeatsNumericPriority) {
  pool("shared-pool");
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{{"user_tier", {{"admin", {"vip", "regular"}}, {"vip", {"regular"}}}}};
  rules.label_priority_threshold = 1.0;
  update(rules);
  running("user-task", "shared-pool", 10.0, {{"user_tier", "regular"}});
  const auto evaluation = evaluate(6.0, "shared-pool", {{"user_tier", "admin"}});
  ASSERT_TRUE(evaluation.should_preempt);
  EXPECT_EQ(evaluation.candidates[0].reason, PreemptReason::kLabel);
  EXPECT_DOUBLE_EQ(evaluation.candidates[0].preempt_score, 1.0);  // the label threshold floors delta -4
  // The optional guard refuses label candidates too far above the incoming priority.
  PolicyUpdate guard;
  guard.label_max_priority_deficit = 3.0;
  update(guard);
  EXPECT_FALSE(evaluate(6.0, "shared-pool", {{"user_tier", "admin"}}).should_preempt);
  EXPECT_TRUE(evaluate(7.0, "shared-pool", {{"user_tier", "admin"}}).should_preempt);
}

TEST_F(PreemptionScenarioTest, P8DisablingLabelPreemptionFallsBackToPoolRules) {
  pool("compute-pool");
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{{"tier", {{"premium", {"standard", "batch"}}, {"standard", {"batch"}}}}};
  rules.enable_label_preemption = false;
  update(rules);
  running("batch-job", "compute-pool", 5.0, {{"tier", "batch"}});
  EXPECT_FALSE(evaluate(5.0, "compute-pool", {{"tier", "premium"}}).should_preempt);
  const auto by_pool = evaluate(6.5, "compute-pool", {{"tier", "premium"}});
  ASSERT_TRUE(by_pool.should_preempt);
  EXPECT_EQ(by_pool.candidates[0].reason, PreemptReason::kSamePool);
}

TEST_F(PreemptionScenarioTest, P9TrainingStagesSubmitPreemptsThePretrainingJob) {
  pool("pretrain-pool", 2, 4096);
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{
      {"training_stage", {{"rlhf", {"pretraining", "sft"}}, {"dpo", {"pretraining"}}, {"sft", {"pretraining"}}}}};
  rules.preemption_aggressiveness = "medium";
  update(rules);
  TaskSpec pretrain{{5.0, {{"training_stage", "pretraining"}}, 0.0, "step=0", 0.0}, "llama-70b-pretrain", "pretrain-pool", "TrainingAgentActor", ResourceVector::of(2, 4096, 0), ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(pretrain).result.success);
  world.advance(30.0);
  TaskSpec rlhf{{5.0, {{"training_stage", "rlhf"}}, 0.0, "", 0.0}, "llama-7b-rlhf", "pretrain-pool", "TrainingAgentActor", ResourceVector::of(1, 2048, 0), ""};
  const auto result = scheduler.submit_task_with_preemption(rlhf);
  ASSERT_TRUE(result.result.success) << result.result.error;
  EXPECT_EQ(scheduler.tasks().names(result.preempted), std::vector<std::string>{"llama-70b-pretrain"});
  const Task* victim = scheduler.tasks().find("llama-70b-pretrain");
  EXPECT_EQ(victim->state, TaskState::kPreempted);
  ASSERT_TRUE(victim->saved_state);
  EXPECT_EQ(victim->saved_state->payload, "step=0");
  EXPECT_DOUBLE_EQ(victim->lost_work, 30.0);
  // Its 2 cpu / 4096 MB went back to the pool; the rlhf job holds 1 / 2048 of it.
  EXPECT_EQ(scheduler.agents().pool("pretrain-pool")->ledger.used(), ResourceVector::of(1, 2048, 0));
  EXPECT_EQ(scheduler.agents().agent("llama-70b-pretrain"), nullptr);
  const auto stats = scheduler.get_preemption_stats();
  EXPECT_EQ(stats.label_preemptions, 1u);
  EXPECT_EQ(stats.total_preemptions, 1u);
  EXPECT_EQ(stats.running_tasks, 1u);
}

TEST_F(PreemptionScenarioTest, P9bASubmitThatNoVictimCanMakeRoomForChangesNothing) {
  pool("pretrain-pool", 2, 4096);
  TaskSpec pretrain{{5.0, {}, 0.0, "", 0.0}, "pretrain", "pretrain-pool", "w", ResourceVector::of(2, 4096, 0), ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(pretrain).result.success);
  TaskSpec peer{{5.5, {}, 0.0, "", 0.0}, "peer", "pretrain-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  const auto result = scheduler.submit_task_with_preemption(peer);  // delta 0.5 < 1.0
  EXPECT_FALSE(result.result.success);
  EXPECT_NE(result.result.error.find("the 0 tasks the policy lets it preempt do not free enough"), std::string::npos)
      << result.result.error;
  EXPECT_EQ(scheduler.tasks().find("pretrain")->state, TaskState::kRunning);
  EXPECT_EQ(scheduler.get_preemption_stats().total_preemptions, 0u);
}

TEST_F(PreemptionScenarioTest, P11StateHandlersPreserveAndRestore) {
  pool("custom-pool");
  std::vector<std::string> preserved, restored;
  bool restorer_fails = false;
  scheduler.register_state_handlers(
      "custom-pool",
      [&](const SavedState& snapshot) -> Expected<std::string> {
        preserved.push_back(snapshot.task_id + ":" + snapshot.payload);
        return "/checkpoints/" + snapshot.task_id + ".ckpt";
      },
      [&](const SavedState& saved) -> Status {
        if (restorer_fails) return Error{"checkpoint " + saved.custom.value_or("?") + " is corrupt"};
        restored.push_back(saved.custom.value_or(""));
        return Ok();
      });
  running("job-a", "custom-pool", 1.0);
  running("job-b", "custom-pool", 1.0);
  const auto a = scheduler.execute_preemption("job-a", "agent-job-a");
  ASSERT_TRUE(a.saved_state);
  EXPECT_EQ(a.saved_state->custom, "/checkpoints/job-a.ckpt");
  EXPECT_EQ(preserved, std::vector<std::string>{"job-a:payload of job-a"});
  ASSERT_TRUE(scheduler.restore_task(*a.saved_state));
  EXPECT_EQ(restored, std::vector<std::string>{"/checkpoints/job-a.ckpt"});
  EXPECT_EQ(scheduler.tasks().find("job-a")->state, TaskState::kRequeued);

  const auto b = scheduler.execute_preemption("job-b", "agent-job-b");
  restorer_fails = true;
  const auto failed = scheduler.restore_task(*b.saved_state);
  EXPECT_FALSE(failed.success);
  EXPECT_NE(failed.error.find("checkpoint /checkpoints/job-b.ckpt is corrupt"), std::string::npos) << failed.error;
  EXPECT_EQ(scheduler.tasks().find("job-b")->state, TaskState::kPreempted);  // still saved, not lost
  EXPECT_EQ(scheduler.get_preemption_stats().restored_tasks, 1u);
}

TEST_F(PreemptionScenarioTest, P11bAFailingPreserverReportsTheTaskLostWithItsWork) {
  pool("custom-pool");
  scheduler.register_state_handlers(
      "custom-pool", [](const SavedState&) -> Expected<std::string> { return Error{"disk full"}; }, nullptr);
  running("job", "custom-pool", 1.0);
  world.advance(12.0);
  const auto outcome = scheduler.execute_preemption("job", "agent-job");
  EXPECT_TRUE(outcome.result.success);
  EXPECT_FALSE(outcome.saved_state);
  EXPECT_NE(outcome.state_error.find("disk full"), std::string::npos);
  EXPECT_EQ(scheduler.tasks().find("job")->state, TaskState::kLost);
  const auto stats = scheduler.get_preemption_stats();
  EXPECT_EQ(stats.lost_tasks, 1u);
  EXPECT_DOUBLE_EQ(stats.lost_work, 12.0);
}

TEST_F(PreemptionScenarioTest, P12ACancelThatNeverAnswersTimesOutButStillFrees) {
  pool("compute-pool", 1, 1024);
  PolicyUpdate timeout;
  timeout.cancel_timeout = 0.5;
  update(timeout);
  TaskSpec stuck{{1.0, {}, 0.0, "s", 0.0}, "stuck", "compute-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(stuck).result.success);
  world.hanging.insert("stuck");
  const auto outcome = scheduler.execute_preemption("stuck", "stuck");
  EXPECT_TRUE(outcome.result.success);
  EXPECT_FALSE(outcome.cancel_success);
  EXPECT_EQ(outcome.cancel_wait, SimTime::from_seconds(0.5));
  EXPECT_EQ(outcome.stops_in, SimTime::zero());  // ManualWorld waited inside the call: nothing lies ahead
  ASSERT_TRUE(outcome.saved_state);
  EXPECT_EQ(outcome.saved_state->payload, "s");
  EXPECT_TRUE(scheduler.agents().pool("compute-pool")->ledger.used().is_zero());
  EXPECT_TRUE(scheduler.cluster().placement_groups().empty());
}

// Task traits have one home (TaskTraits): whichever door a task comes in by, the core's
// record and the state saved at its preemption carry every trait it came with.
TEST_F(PreemptionScenarioTest, EveryTraitATaskComesWithReachesItsRecordAndItsSavedState) {
  pool("compute-pool", 64, 65536);
  std::mt19937_64 rng(7);
  const auto number = [&rng] { return static_cast<double>(rng() % 1000) / 8; };
  for (int i = 0; i < 40; ++i) {
    TaskTraits traits;
    traits.priority = number();
    traits.labels = {{"k" + std::to_string(rng() % 3), "v" + std::to_string(rng() % 5)}};
    traits.estimated_duration = number();
    traits.payload = "payload-" + std::to_string(rng());
    traits.checkpoint_interval = number();
    const std::string id = "task-" + std::to_string(i);
    if (i % 2 == 0) {
      TaskSpec spec;
      static_cast<TaskTraits&>(spec) = traits;
      spec.task_id = id;
      spec.pool = "compute-pool";
      spec.resources = ResourceVector::of(1, 1024, 0);
      ASSERT_TRUE(scheduler.submit_task_with_preemption(spec).result.success);
    } else {
      ASSERT_TRUE(scheduler.create_agent({"agent-" + id, "compute-pool", "worker", ResourceVector::of(1, 1024, 0), {}, 0}));
      RunningTaskSpec spec;
      static_cast<TaskTraits&>(spec) = traits;
      spec.task_id = id;
      spec.agent_name = "agent-" + id;
      ASSERT_TRUE(scheduler.register_running_task(spec));
    }
    EXPECT_EQ(static_cast<const TaskTraits&>(*scheduler.tasks().find(id)), traits) << id;
    const auto outcome = scheduler.execute_preemption(id, scheduler.tasks().find(id)->agent);
    ASSERT_TRUE(outcome.saved_state) << id;
    EXPECT_EQ(static_cast<const TaskTraits&>(*outcome.saved_state), traits) << id;
  }
}

TEST_F(PreemptionScenarioTest, P13StatsAgreeWithWhatHappened) {
  pool("compute-pool", 8, 16384);
  pool("premium-pool", 8, 16384);
  PolicyUpdate rules;
  rules.label_preemption_rules = LabelRules{{"tier", {{"premium", {"batch"}}}}};
  update(rules);
  running("a", "compute-pool", 1.0);
  running("b", "compute-pool", 2.5, {{"tier", "batch"}});
  running("c", "compute-pool", 1.0);
  world.advance(5.0);

  ASSERT_EQ(evaluate(3.0, "compute-pool").candidates.size(), 2u);  // a and c, same pool
  ASSERT_TRUE(scheduler.execute_preemption("a", "agent-a").result.success);
  world.advance(1.0);
  ASSERT_FALSE(evaluate(8.0, "premium-pool").candidates.empty());
  ASSERT_TRUE(scheduler.execute_preemption("c", "agent-c").result.success);
  world.advance(1.0);
  ASSERT_EQ(evaluate(2.0, "premium-pool", {{"tier", "premium"}}).candidates[0].task_id, "b");
  ASSERT_TRUE(scheduler.execute_preemption("b", "agent-b").result.success);

  const auto stats = scheduler.get_preemption_stats();
  EXPECT_EQ(stats.total_preemptions, 3u);
  EXPECT_EQ(stats.same_pool_preemptions, 1u);
  EXPECT_EQ(stats.cross_pool_preemptions, 1u);
  EXPECT_EQ(stats.label_preemptions, 1u);
  EXPECT_EQ(stats.running_tasks, 0u);
  ASSERT_EQ(stats.recent_preemptions.size(), 3u);
  const auto& newest = stats.recent_preemptions[0];
  EXPECT_EQ(newest.task_id, "b");
  EXPECT_EQ(newest.timestamp, SimTime::from_seconds(7));
  EXPECT_EQ(newest.pool_name, "compute-pool");
  EXPECT_DOUBLE_EQ(newest.priority, 2.5);
  EXPECT_EQ(newest.reason, "label_based_preemption");
  EXPECT_DOUBLE_EQ(newest.lost_work, 7.0);
  EXPECT_EQ(stats.recent_preemptions[1].task_id, "c");
  EXPECT_EQ(stats.recent_preemptions[1].reason, "cross_pool_preemption");
  EXPECT_EQ(stats.recent_preemptions[2].task_id, "a");
  EXPECT_EQ(stats.recent_preemptions[2].reason, "same_pool_preemption");
  EXPECT_EQ(stats.recent_preemptions[2].timestamp, SimTime::from_seconds(5));
}

TEST_F(PreemptionScenarioTest, YoungVictimsAreProtectedByTheMinimumRuntime) {
  pool("compute-pool");
  PolicyUpdate guard;
  guard.min_runtime_before_preemption = 60.0;
  update(guard);
  running("fresh", "compute-pool", 1.0);
  EXPECT_FALSE(evaluate(9.0, "compute-pool").should_preempt);
  world.advance(59.0);
  EXPECT_FALSE(evaluate(9.0, "compute-pool").should_preempt);
  world.advance(1.0);
  EXPECT_TRUE(evaluate(9.0, "compute-pool").should_preempt);
}

TEST_F(PreemptionScenarioTest, FreedCapacityIsHeldForThePreemptorUntilTheHoldTimesOut) {
  pool("compute-pool", 1, 1024);
  TaskSpec low{{1.0, {}, 0.0, "", 0.0}, "low", "compute-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  ASSERT_TRUE(scheduler.submit_task_with_preemption(low).result.success);
  ASSERT_TRUE(scheduler.execute_preemption("low", "low", /*hold_for=*/"high").result.success);
  // A third task of even higher priority cannot take the held capacity.
  TaskSpec third{{9.0, {}, 0.0, "", 0.0}, "third", "compute-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  EXPECT_FALSE(scheduler.submit_task_with_preemption(third).result.success);
  TaskSpec high{{5.0, {}, 0.0, "", 0.0}, "high", "compute-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  const auto placed = scheduler.submit_task_with_preemption(high);
  ASSERT_TRUE(placed.result.success) << placed.result.error;
  EXPECT_EQ(placed.agent_name, "low");  // the held agent
  EXPECT_TRUE(placed.preempted.empty());
  ASSERT_TRUE(scheduler.complete("high"));

  // A hold nobody claims ends after hold_timeout and the capacity is free again.
  ASSERT_TRUE(scheduler.submit_task_with_preemption(low).result.success);
  ASSERT_TRUE(scheduler.execute_preemption("low", scheduler.tasks().find("low")->agent, "never-comes").result.success);
  EXPECT_FALSE(scheduler.submit_task_with_preemption(third).result.success);
  world.advance(30.0);
  EXPECT_TRUE(scheduler.submit_task_with_preemption(third).result.success);
}

}  // namespace
}  // namespace meshsim::scheduler

namespace meshsim::scheduler {
namespace {

TEST_F(PreemptionScenarioTest, AgentsWithoutARecentHeartbeatAreRecreatedAndTheirTasksRequeued) {
  pool("compute-pool");
  running("alive", "compute-pool", 1.0);
  running("silent", "compute-pool", 1.0);
  world.advance(100.0);
  scheduler.record_heartbeat("agent-alive");
  world.advance(30.0);
  const auto report = scheduler.ensure_agent_health(SimTime::from_seconds(120));
  EXPECT_EQ(report.recreated_agents, std::vector<std::string>{"agent-silent"});
  EXPECT_EQ(report.requeued_tasks, std::vector<std::string>{"silent"});
  EXPECT_EQ(scheduler.tasks().find("silent")->state, TaskState::kRequeued);
  EXPECT_DOUBLE_EQ(scheduler.tasks().find("silent")->lost_work, 130.0);
  EXPECT_EQ(scheduler.tasks().find("alive")->state, TaskState::kRunning);
  const Agent* fresh = scheduler.agents().agent("agent-silent");
  ASSERT_NE(fresh, nullptr);
  EXPECT_FALSE(fresh->task);
  EXPECT_EQ(fresh->last_heartbeat, SimTime::from_seconds(130));
  EXPECT_EQ(scheduler.get_preemption_stats().requeued_tasks, 1u);
  // The requeued task runs again on the fresh agent.
  TaskSpec again{{1.0, {}, 0.0, "", 0.0}, "silent", "compute-pool", "w", ResourceVector::of(1, 1024, 0), ""};
  const auto resubmitted = scheduler.submit_task_with_preemption(again);
  ASSERT_TRUE(resubmitted.result.success) << resubmitted.result.error;
  EXPECT_EQ(resubmitted.agent_name, "agent-silent");
}

}  // namespace
}  // namespace meshsim::scheduler
