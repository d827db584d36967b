// The shared cluster: serving instances and batch jobs under one scheduling core. A
// scale-up on a full cluster preempts batch work (which loses the work since its last
// checkpoint, is requeued and resumes when GPUs come free), batch classes preempt one
// another only as the preemption policy allows, and whatever happens, every job is
// completed, running, queued or failed (a random property test checks the invariants
// after every action).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/shared/shared_cluster.hpp"
#include "tests/sim/llm_test_support.hpp"

namespace meshsim::cluster {
namespace {

using shared::BatchClass;
using shared::BatchCounts;
using shared::BatchRunner;
using shared::SharedCluster;
using shared::SharedClusterConfig;
using testing::base_config;

struct NullSink final : RequestSink {
  void on_request_finished(const RequestRecord&) override {}
};

scheduler::NodeSpec node(const std::string& name) {
  auto capacity = scheduler::ResourceVector::of(64, 512'000, 8);
  capacity.with_custom("sku:toy-gpu", 8);
  return scheduler::NodeSpec{name, capacity, {}, "toy-gpu"};
}

SharedClusterConfig shared_config(std::uint32_t nodes) {
  SharedClusterConfig config;
  for (std::uint32_t i = 0; i < nodes; ++i) config.nodes.push_back(node("node-" + std::to_string(i)));
  config.instance_resources = scheduler::ResourceVector::of(32, 256'000, 4).with_custom("sku:toy-gpu", 4);
  config.classes["BE"] = BatchClass{"batch", 1.0, {{"qos", "BE"}}, 30.0};
  config.classes["LS"] = BatchClass{"batch", 2.5, {{"qos", "LS"}}, 30.0};
  return config;
}

// Batch classes in the serving pool or their own, serving above, between or below them,
// with or without a label rule (seed 000's roles share one pool).
void share_serving_pool_at_random(SharedClusterConfig& config, std::mt19937_64& rng) {
  config.serving_priority = std::vector<double>{100, 2.0, 0.5}[rng() % 3];
  if (rng() % 2 == 0) {
    for (auto& [name, cls] : config.classes) cls.pool = config.serving_pool;
  }
  if (rng() % 2 == 0) config.policy.label_preemption_rules = {{"qos", {{"LS", {"BE"}}}}};
}

traces::BatchJobRecord job(std::string name, double arrival, double duration, double gpu, std::string cls) {
  traces::BatchJobRecord record;
  record.name = std::move(name);
  record.arrival_s = arrival;
  record.duration_s = duration;
  record.cpu = 8;
  record.memory_mb = 16'000;
  record.gpu = gpu;
  record.job_class = std::move(cls);
  return record;
}

struct World {
  World(std::uint32_t nodes, std::vector<traces::BatchJobRecord> jobs, std::vector<InstanceGroup> start,
        SharedClusterConfig config)
      : cluster(sim, tp4(), sink) {
    config.nodes.resize(nodes, node("unused"));
    for (std::uint32_t i = 0; i < nodes; ++i) config.nodes[i].name = "node-" + std::to_string(i);
    auto created = SharedCluster::create(sim, cluster, std::move(config), std::move(jobs), start);
    if (!created) throw std::runtime_error(created.error().message);
    shared = std::move(*created);
    manager = std::make_unique<ScalingManager>(sim, cluster, ScalingConfig{}, shared.get());
    shared->start();
  }
  static LlmClusterConfig tp4() {
    auto config = base_config({});
    config.tensor_parallel = 4;
    return config;
  }
  void run_until(double seconds) { sim.run_until(SimTime::from_seconds(seconds)); }
  // Runs to `seconds`, then scales up or down by one instance (refusals are fine).
  void act(double seconds, bool up) {
    run_until(seconds);
    if (up) {
      (void)manager->scale_up_full(InstanceTag::kMixed);
    } else {
      (void)manager->scale_down(InstanceTag::kMixed);
    }
  }
  void expect_sound() const {
    const auto problems = shared->check_invariants();
    EXPECT_TRUE(problems.empty()) << problems.front();
  }

  engine::Simulation sim{1};
  NullSink sink;
  LlmCluster cluster;
  std::unique_ptr<SharedCluster> shared;
  std::unique_ptr<ScalingManager> manager;
};

TEST(SharedClusterTest, ScaleUpPreemptsBatchWorkWhichLosesWorkSinceItsCheckpointAndResumesLater) {
  World w(1, {job("a", 0, 100, 4, "BE")}, {{InstanceTag::kMixed, 1}}, shared_config(1));
  w.run_until(50);
  EXPECT_EQ(w.shared->batch().counts().running, 1u);
  const auto up = w.manager->scale_up_full(InstanceTag::kMixed);
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_EQ(up->server, 0u);  // the node the job held
  const auto& counts = w.shared->batch().counts();
  EXPECT_EQ(counts.preemptions, 1u);
  EXPECT_EQ(counts.queued, 1u);
  // 50 s run, checkpoints every 30 s: 30 s kept, 20 s lost, on 4 GPUs.
  EXPECT_DOUBLE_EQ(counts.useful_gpu_s, 120.0);
  EXPECT_DOUBLE_EQ(counts.lost_gpu_s, 80.0);
  EXPECT_EQ(w.shared->core().get_preemption_stats().cross_pool_preemptions, 1u);
  w.expect_sound();
  // The scale-down frees the GPUs once the instance is drained (the next drain check, 1 s).
  w.run_until(100);
  ASSERT_TRUE(w.manager->scale_down_full(up->instance));
  w.run_until(101);
  EXPECT_EQ(counts.running, 1u);
  EXPECT_EQ(counts.requeues, 1u);
  w.expect_sound();
  // 70 s of work left from the checkpoint: done at 171 s.
  w.run_until(170.9);
  EXPECT_EQ(counts.completed, 0u);
  w.run_until(171);
  EXPECT_EQ(counts.completed, 1u);
  EXPECT_DOUBLE_EQ(counts.useful_gpu_s, 400.0);
  EXPECT_DOUBLE_EQ(counts.lost_gpu_s, 80.0);
  EXPECT_TRUE(counts.adds_up());
  w.expect_sound();
}

// The shared cluster and the elastic servers are both InstancePlacements: a node's last
// serving instance leaving takes its server with it, counted and logged alike.
TEST(SharedClusterTest, ANodesLastInstanceLeavingRemovesItsServerCountedAndLogged) {
  World w(2, {}, {{InstanceTag::kMixed, 2}}, shared_config(2));
  std::vector<std::string> log;
  w.manager->set_log([&](std::string_view line) { log.emplace_back(line); });
  const auto a = w.manager->scale_up_full(InstanceTag::kMixed);
  const auto b = w.manager->scale_up_full(InstanceTag::kMixed);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->server, b->server);  // the second node: the first is full
  EXPECT_EQ(w.cluster.fleet().servers().count(), 2u);
  w.run_until(100);
  ASSERT_TRUE(w.manager->scale_down_full(a->instance));
  w.run_until(200);
  EXPECT_EQ(w.manager->view().counts().servers_removed, 0u);  // b still serves there
  ASSERT_TRUE(w.manager->scale_down_full(b->instance));
  w.run_until(300);
  EXPECT_EQ(w.manager->view().counts().servers_removed, 1u);
  EXPECT_EQ(w.cluster.fleet().servers().count(), 1u);
  const std::string removed = "[ScalingManager] Auto scale-down server " + std::to_string(b->server) + " after instance removal";
  EXPECT_NE(std::find(log.begin(), log.end(), removed), log.end());
  w.expect_sound();
}

// Two-phase preemption on the simulated clock: the scale-up takes the job's room at once,
// but the instance starts loading only when the job's agent has stopped, and the job is
// requeued only then. A hung agent stops when killed at cancel_timeout; one that answers
// late, when it answers.
TEST(SharedClusterTest, AScaleUpWaitsForThePreemptedJobsAgentToStop) {
  for (const auto& [hung_share, answer_s, stops_after] :
       {std::tuple{1.0, 0.0, 20.0}, std::tuple{0.0, 5.0, 5.0}, std::tuple{0.0, 45.0, 20.0}}) {
    auto config = shared_config(1);
    config.policy.cancel_timeout = 20;
    config.classes["BE"].hung_share = hung_share;
    config.classes["BE"].cancel_answer_s = answer_s;
    World w(1, {job("a", 0, 100, 4, "BE")}, {{InstanceTag::kMixed, 1}}, config);
    w.run_until(50);
    const auto up = w.manager->scale_up_full(InstanceTag::kMixed);
    ASSERT_TRUE(up) << up.error().message;
    const auto& counts = w.shared->batch().counts();
    EXPECT_EQ(counts.preemptions, 1u);
    EXPECT_EQ(counts.stopping, 1u);
    EXPECT_EQ(counts.queued, 0u);
    EXPECT_DOUBLE_EQ(counts.lost_gpu_s, 80.0);  // the run ends at the ask: 20 s since the checkpoint
    w.expect_sound();
    // Activation: the wait, then the scale-up delay (10 s).
    const double active_at = 50 + stops_after + 10;
    w.run_until(50 + stops_after - 1e-6);
    EXPECT_EQ(counts.stopping, 1u) << hung_share << " " << answer_s;
    w.run_until(50 + stops_after);
    EXPECT_EQ(counts.stopping, 0u);
    EXPECT_EQ(counts.queued, 1u);
    EXPECT_EQ(counts.hung_agents, stops_after < answer_s || hung_share > 0 ? 1u : 0u) << answer_s;
    w.expect_sound();
    w.run_until(active_at - 1e-6);
    EXPECT_EQ(w.manager->view().count(InstanceTag::kMixed, InstanceState::kStarting), 1u);
    w.run_until(active_at);
    EXPECT_EQ(w.manager->view().count(InstanceTag::kMixed, InstanceState::kActive), 2u);
    EXPECT_TRUE(counts.adds_up());
    w.expect_sound();
  }
}

TEST(SharedClusterTest, AScaleUpThatFindsNoRoomEvenAfterPreemptionIsBlocked) {
  auto config = shared_config(1);
  config.policy.enable_cross_pool_preemption = false;
  World w(1, {job("a", 0, 100, 4, "BE")}, {{InstanceTag::kMixed, 1}}, config);
  w.run_until(10);
  const auto up = w.manager->scale_up_full(InstanceTag::kMixed);
  ASSERT_FALSE(up);
  EXPECT_NE(up.error().message.find("no node has room"), std::string::npos) << up.error().message;
  EXPECT_EQ(w.manager->view().counts().blocked, 1u);
  EXPECT_EQ(w.shared->batch().counts().running, 1u);
  w.expect_sound();
}

TEST(SharedClusterTest, AServingInstanceIsNeverAVictimEvenUnderAZeroThreshold) {
  // Equal priorities qualify under a zero same-pool threshold and a zero minimum score:
  // one scale-up could then evict another instance; it is blocked instead.
  auto config = shared_config(1);
  config.policy.same_pool_priority_threshold = 0;
  config.policy.min_preempt_score = 0;
  World w(1, {}, {{InstanceTag::kMixed, 2}}, config);
  const auto up = w.manager->scale_up_full(InstanceTag::kMixed);
  EXPECT_FALSE(up);
  EXPECT_EQ(w.cluster.instances(), 2u);
  EXPECT_EQ(w.shared->core().get_preemption_stats().total_preemptions, 0u);
  w.expect_sound();
}

TEST(SharedClusterTest, BatchWorkInTheServingPoolAboveServingWaitsForItAndServingPreemptsOnlyWhatItOutranks) {
  // One node: a serving instance (priority 2.0, 4 GPUs) and 4 GPUs of BE work (1.0). LS
  // (2.5) shares the serving pool and outranks serving: arriving with no room it preempts
  // BE work, never the instance; then a scale-up finds only LS work, which it may not
  // preempt, and is blocked.
  auto config = shared_config(1);
  config.serving_priority = 2.0;
  for (auto& [name, cls] : config.classes) cls.pool = config.serving_pool;
  World w(1, {job("be", 0, 1000, 4, "BE"), job("ls", 10, 1000, 4, "LS")}, {{InstanceTag::kMixed, 1}}, config);
  w.run_until(11);
  const auto& counts = w.shared->batch().counts();
  EXPECT_EQ(counts.preemptions, 1u);
  EXPECT_EQ(w.shared->batch().preemptions_by_class(),
            (BatchRunner::PreemptionsByClass{{{"LS", "BE"}, 1}}));
  EXPECT_EQ(w.cluster.instances(), 1u);
  EXPECT_FALSE(w.manager->scale_up_full(InstanceTag::kMixed));
  EXPECT_EQ(counts.preemptions, 1u);
  w.expect_sound();
  // Once LS is done, the scale-up preempts the BE job that took its room back (2.0 over
  // 1.0 clears MEDIUM's same-pool threshold), and says so by class.
  w.run_until(1020);
  EXPECT_TRUE(w.manager->scale_up_full(InstanceTag::kMixed));
  EXPECT_EQ(w.shared->batch().preemptions_by_class(),
            (BatchRunner::PreemptionsByClass{{{"LS", "BE"}, 1}, {{"serving", "BE"}, 1}}));
  w.expect_sound();
}

TEST(SharedClusterTest, BatchClassesPreemptEachOtherOnlyAsThePresetAllows) {
  // LS (2.5) arrives on a node full of BE (1.0) work: Δ 1.5 clears HIGH's and MEDIUM's
  // same-pool threshold (0.5, 1.0) but not LOW's (3.0).
  for (const auto& [preset, preempts] : {std::pair{"HIGH", true}, {"MEDIUM", true}, {"LOW", false}}) {
    auto config = shared_config(1);
    scheduler::PolicyUpdate update;
    update.preemption_aggressiveness = std::string(preset);
    ASSERT_TRUE(scheduler::update_policy(config.policy, update).result.success);
    World w(1, {job("be", 0, 100, 4, "BE"), job("ls", 10, 20, 4, "LS")}, {{InstanceTag::kMixed, 1}}, config);
    w.run_until(11);
    const auto& counts = w.shared->batch().counts();
    EXPECT_EQ(counts.preemptions, preempts ? 1u : 0u) << preset;
    EXPECT_EQ(counts.queued, 1u) << preset;
    w.expect_sound();
    w.run_until(1000);
    EXPECT_EQ(counts.completed, 2u) << preset;
    w.expect_sound();
  }
}

TEST(SharedClusterTest, AJobBiggerThanEveryNodeFailsAtArrivalAndIsCounted) {
  World w(2, {job("huge", 0, 10, 16, "BE"), job("ok", 0, 10, 1, "BE")}, {{InstanceTag::kMixed, 1}},
          shared_config(2));
  w.run_until(100);
  const auto& counts = w.shared->batch().counts();
  EXPECT_EQ(counts.arrived, 2u);
  EXPECT_EQ(counts.failed, 1u);
  EXPECT_EQ(counts.completed, 1u);
  EXPECT_TRUE(counts.adds_up());
}

TEST(SharedClusterTest, AStartStateThatDoesNotFitIsAnError) {
  engine::Simulation sim(1);
  NullSink sink;
  LlmCluster cluster(sim, World::tp4(), sink);
  const auto created = SharedCluster::create(sim, cluster, shared_config(1), {}, {{InstanceTag::kMixed, 3}});
  ASSERT_FALSE(created);
  EXPECT_NE(created.error().message.find("2 instances placed"), std::string::npos) << created.error().message;
}

TEST(SharedClusterTest, PoolsOnTheirOwnGpusAreRefused) {
  // Nodes hold one shape of serving instance: a pool on other GPUs has no place there.
  engine::Simulation sim(1);
  NullSink sink;
  LlmClusterConfig config = World::tp4();
  config.pool_hardware.push_back({InstanceTag::kPrompt, config.sku, 8, config.perf, "test"});
  LlmCluster cluster(sim, config, sink);
  const auto created = SharedCluster::create(sim, cluster, shared_config(2), {}, {{InstanceTag::kMixed, 1}});
  ASSERT_FALSE(created);
  EXPECT_NE(created.error().message.find("a shared cluster serves on one SKU"), std::string::npos)
      << created.error().message;
}

// Random clusters, jobs and scaling: after every action the core, the runner and the
// serving map agree, and at the end every job is accounted for and every completed job
// was paid for in full (useful GPU-seconds cover the work of completed jobs).
TEST(SharedClusterPropertyTest, RandomScalingAndBatchJobsLoseNothing) {
  const auto cases = static_cast<std::uint32_t>(testing::case_count(300));
  for (std::uint32_t seed = 1; seed <= cases; ++seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    const std::uint32_t nodes = 1 + rng() % 4;
    std::vector<traces::BatchJobRecord> jobs;
    double t = 0;
    const char* classes[] = {"BE", "LS"};
    double total_work = 0;
    for (int i = 0, n = static_cast<int>(rng() % 40); i < n; ++i) {
      t += pick(0, 20);
      const double gpu = std::vector<double>{0.3, 1, 2, 4, 8, 9}[rng() % 6];
      jobs.push_back(job("j" + std::to_string(i), t, pick(1, 200), gpu, classes[rng() % 2]));
      total_work += jobs.back().duration_s * gpu;
    }
    auto config = shared_config(nodes);
    share_serving_pool_at_random(config, rng);
    config.classes["BE"].checkpoint_interval_s = std::vector<double>{0, 10, 45}[rng() % 3];
    // Agents that hang or answer late (stopping jobs must add up too).
    config.classes["BE"].hung_share = std::vector<double>{0, 0.5, 1}[rng() % 3];
    config.classes["LS"].cancel_answer_s = std::vector<double>{0, 3, 60}[rng() % 3];
    const double cancel_timeout = std::vector<double>{0, 15, 30}[rng() % 3];
    scheduler::PolicyUpdate update;
    update.preemption_aggressiveness = std::string(std::vector<const char*>{"HIGH", "MEDIUM", "LOW"}[rng() % 3]);
    update.cancel_timeout = cancel_timeout;
    ASSERT_TRUE(scheduler::update_policy(config.policy, update).result.success);
    World w(nodes, jobs, {{InstanceTag::kMixed, 1}}, config);
    for (double now = 0; now < 600; now += pick(1, 30)) {
      w.act(now, rng() % 2 == 0);
      const auto problems = w.shared->check_invariants();
      ASSERT_TRUE(problems.empty()) << "seed " << seed << " at " << now << ": " << problems.front();
      // Every GPU-second held is useful, lost, or in a run still going.
      const auto& c = w.shared->batch().counts();
      ASSERT_NEAR(w.shared->batch().held_gpu_s(w.sim.now()),
                  c.useful_gpu_s + c.lost_gpu_s + w.shared->batch().running_gpu_s(w.sim.now()), 1e-6 * (1 + total_work))
          << "seed " << seed;
    }
    // Serving back to one instance (once the STARTING ones are up): every job that fits
    // beside it ends.
    w.run_until(700);
    while (w.manager->scale_down(InstanceTag::kMixed)) {
    }
    w.run_until(100'000);
    const auto& counts = w.shared->batch().counts();
    ASSERT_TRUE(counts.adds_up()) << "seed " << seed;
    EXPECT_EQ(counts.arrived, jobs.size()) << "seed " << seed;
    EXPECT_EQ(counts.stopping, 0u) << "seed " << seed;
    EXPECT_EQ(counts.preemptions, counts.requeues) << "seed " << seed;
    // A job of more GPUs than the one serving instance leaves free waits (queued, counted).
    const double room = nodes == 1 ? 4 : 8;
    double stuck_work = 0;
    std::uint64_t stuck = 0, failed = 0;
    for (const auto& j : jobs) {
      if (j.gpu <= room) continue;
      stuck_work += j.duration_s * j.gpu;
      ++(j.gpu > 8 ? failed : stuck);
    }
    EXPECT_EQ(counts.failed, failed) << "seed " << seed;
    EXPECT_EQ(counts.running + counts.queued, stuck) << "seed " << seed;
    EXPECT_EQ(counts.completed + stuck + failed, jobs.size()) << "seed " << seed;
    EXPECT_NEAR(counts.useful_gpu_s, total_work - stuck_work, 1e-6 * total_work) << "seed " << seed;
  }
}

// Skipping the core for jobs it just refused (and those that need more at no higher
// priority, and those a refusal that lapsed still stands for) must not change anything:
// random worlds run with and without it give the same counts, GPU-seconds and
// preemptions at every step, and the pruned worlds ask the core less.
TEST(SharedClusterPropertyTest, PruningRefusedJobsChangesNoOutcome) {
  const auto cases = static_cast<std::uint32_t>(testing::case_count(150));
  std::uint64_t pruned_asks = 0, exhaustive_asks = 0;
  for (std::uint32_t seed = 1; seed <= cases; ++seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    const std::uint32_t nodes = 1 + rng() % 3;
    std::vector<traces::BatchJobRecord> jobs;
    double t = 0;
    const char* classes[] = {"BE", "LS"};
    for (int i = 0, n = static_cast<int>(rng() % 60); i < n; ++i) {
      t += pick(0, 8);
      const double gpu = std::vector<double>{0.25, 0.5, 1, 2, 3, 4, 8}[rng() % 7];
      jobs.push_back(job("j" + std::to_string(i), t, pick(1, 150), gpu, classes[rng() % 2]));
    }
    auto config = shared_config(nodes);
    share_serving_pool_at_random(config, rng);
    config.classes["BE"].hung_share = std::vector<double>{0, 0.5}[rng() % 2];
    config.classes["LS"].cancel_answer_s = std::vector<double>{0, 4}[rng() % 2];
    scheduler::PolicyUpdate update;
    update.preemption_aggressiveness = std::string(std::vector<const char*>{"HIGH", "MEDIUM", "LOW"}[rng() % 3]);
    ASSERT_TRUE(scheduler::update_policy(config.policy, update).result.success);
    std::vector<std::pair<double, bool>> actions;  // (time, scale up)
    for (double now = pick(1, 30); now < 500; now += pick(1, 30)) actions.emplace_back(now, rng() % 2 == 0);
    auto pruned = config, exhaustive = config;
    exhaustive.prune_refusals = false;
    World a(nodes, jobs, {{InstanceTag::kMixed, 1}}, pruned);
    World b(nodes, jobs, {{InstanceTag::kMixed, 1}}, exhaustive);
    for (const auto& [now, up] : actions) {
      a.act(now, up);
      b.act(now, up);
      const auto& ca = a.shared->batch().counts();
      const auto& cb = b.shared->batch().counts();
      ASSERT_EQ(std::tie(ca.arrived, ca.completed, ca.running, ca.stopping, ca.queued, ca.failed, ca.starts,
                         ca.preemptions, ca.hung_agents),
                std::tie(cb.arrived, cb.completed, cb.running, cb.stopping, cb.queued, cb.failed, cb.starts,
                         cb.preemptions, cb.hung_agents))
          << "seed " << seed << " at " << now;
      ASSERT_EQ(ca.useful_gpu_s, cb.useful_gpu_s) << "seed " << seed << " at " << now;
      ASSERT_EQ(ca.lost_gpu_s, cb.lost_gpu_s) << "seed " << seed << " at " << now;
      ASSERT_EQ(a.manager->view().get_status_summary(), b.manager->view().get_status_summary()) << "seed " << seed;
    }
    pruned_asks += a.shared->core().metrics().task_schedule_latency_ms.count;
    exhaustive_asks += b.shared->core().metrics().task_schedule_latency_ms.count;
  }
  // Lapsed refusals judged by the room now bring it under a quarter (they were 27% when a
  // refusal that lapsed was dropped, each job then asking the core again).
  EXPECT_LT(4 * pruned_asks, exhaustive_asks) << pruned_asks << " of the exhaustive twin's " << exhaustive_asks;
}

// A hung agent killed at a cancel_timeout of 0 stops at the ask, as one that answers at
// once: random worlds run both ways agree on everything but the count of hung agents
// (the unfolded twin of two-phase preemption: a zero wait must add no event that moves
// an outcome).
TEST(SharedClusterPropertyTest, HungAgentsKilledAtATimeoutOfZeroChangeNothingButTheirCount) {
  const auto cases = static_cast<std::uint32_t>(testing::case_count(100));
  for (std::uint32_t seed = 1; seed <= cases; ++seed) {
    std::mt19937_64 rng(seed);
    const auto pick = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
    const std::uint32_t nodes = 1 + rng() % 3;
    std::vector<traces::BatchJobRecord> jobs;
    double t = 0;
    for (int i = 0, n = static_cast<int>(rng() % 50); i < n; ++i) {
      t += pick(0, 8);
      const double gpu = std::vector<double>{0.5, 1, 2, 4, 8}[rng() % 5];
      jobs.push_back(job("j" + std::to_string(i), t, pick(1, 150), gpu, rng() % 2 ? "BE" : "LS"));
    }
    auto answering = shared_config(nodes);
    answering.policy.cancel_timeout = 0;
    auto hung = answering;
    for (auto& [name, cls] : hung.classes) cls.hung_share = 1;
    World a(nodes, jobs, {{InstanceTag::kMixed, 1}}, answering);
    World b(nodes, jobs, {{InstanceTag::kMixed, 1}}, hung);
    for (double now = pick(1, 30); now < 500; now += pick(1, 30)) {
      const bool up = rng() % 2 == 0;
      a.act(now, up);
      b.act(now, up);
      const auto& ca = a.shared->batch().counts();
      const auto& cb = b.shared->batch().counts();
      ASSERT_EQ(std::tie(ca.arrived, ca.completed, ca.running, ca.stopping, ca.queued, ca.failed, ca.starts,
                         ca.preemptions, ca.requeues),
                std::tie(cb.arrived, cb.completed, cb.running, cb.stopping, cb.queued, cb.failed, cb.starts,
                         cb.preemptions, cb.requeues))
          << "seed " << seed << " at " << now;
      ASSERT_EQ(ca.useful_gpu_s, cb.useful_gpu_s) << "seed " << seed;
      ASSERT_EQ(ca.hung_agents, 0u);
      ASSERT_EQ(cb.hung_agents, cb.preemptions) << "seed " << seed;
      ASSERT_EQ(a.manager->view().get_status_summary(), b.manager->view().get_status_summary()) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace meshsim::cluster
