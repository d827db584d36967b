// The ScalingManager and the instance lifecycle (scenario E4 and the drain half of E2):
// scale-up through STARTING, scale-down of the least-loaded instance, drain, removal of
// the instance and its server, limits refused and logged as blocked, and evacuation past
// the drain timeout moving requests without losing one, and migration between the prompt
// and token pools.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/cluster/scaling_manager.hpp"
#include "sim/engine/rng.hpp"
#include "tests/sim/llm_test_support.hpp"

namespace meshsim::cluster {
namespace {

using testing::base_config;

struct Sink final : RequestSink {
  void on_request_finished(const RequestRecord& record) override { done.push_back(record); }
  std::vector<RequestRecord> done;
};

struct Fixture {
  explicit Fixture(std::vector<InstanceGroup> groups, ScalingConfig scaling = {})
      : cluster(sim, base_config(std::move(groups)), sink), manager(sim, cluster, scaling) {
    manager.set_log([this](std::string_view line) { log.emplace_back(line); });
  }
  void submit(std::uint64_t id, std::uint32_t prompt, std::uint32_t output) {
    traces::TraceRequest r;
    r.id = id;
    r.arrival = sim.now();
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    cluster.submit(r);
  }
  void run_until(double seconds) { sim.run_until(SimTime::from_seconds(seconds)); }
  bool logged(const std::string& line) const { return std::find(log.begin(), log.end(), line) != log.end(); }

  engine::Simulation sim{1};
  Sink sink;
  LlmCluster cluster;
  ScalingManager manager;
  std::vector<std::string> log;
};

ScalingConfig with_delay(double seconds) {
  ScalingConfig config;
  config.scale_up_delay = SimTime::from_seconds(seconds);
  return config;
}

ScalingStatus status(std::uint32_t active, std::uint32_t starting, std::uint32_t draining, std::uint32_t servers,
                     std::uint32_t instances) {
  return ScalingStatus{active, starting, draining, servers, instances};
}

TEST(ScalingManagerTest, ScaleUpCreatesAServerAndAnInstanceThatIsActiveAfterTheDelay) {
  Fixture f({{InstanceTag::kMixed, 1}});
  EXPECT_EQ(f.manager.view().get_status_summary(), status(1, 0, 0, 1, 1));
  f.run_until(5);
  const auto added = f.manager.scale_up_full(InstanceTag::kMixed);
  ASSERT_TRUE(added);
  EXPECT_EQ(added->server, 1u);
  EXPECT_EQ(added->instance, 1u);
  EXPECT_EQ(f.manager.view().get_status_summary(), status(1, 1, 0, 2, 2));
  EXPECT_EQ(f.manager.view().get_active_instances().size(), 1u);
  // Requests while it starts go to the ACTIVE instance only.
  for (int i = 0; i < 5; ++i) f.submit(i, 100, 2000);
  f.run_until(14.999999);
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kStarting);
  EXPECT_EQ(f.cluster.fleet().view(1)->requests, 0);
  f.run_until(15);
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kActive);
  EXPECT_EQ(f.manager.view().get_status_summary(), status(2, 0, 0, 2, 2));
  EXPECT_TRUE(f.logged("[ScalingManager] Full scale-up: server 1 + instance 1"));
  EXPECT_TRUE(f.logged("[ScalingManager] Instance 1 scaled up at 15.00"));
  // New requests now reach it (it has the least load).
  f.submit(10, 100, 50);
  EXPECT_EQ(f.cluster.fleet().view(1)->requests, 1);
}

TEST(ScalingManagerTest, ScaleDownDrainsTheLeastLoadedAndRemovesItsServerOnceEmpty) {
  Fixture f({{InstanceTag::kPrompt, 2}, {InstanceTag::kToken, 2}});
  // Prompt instance 0 gets the longer prompt; 1 has fewer pending tokens.
  f.submit(0, 5000, 3);
  f.submit(1, 100, 3);
  ASSERT_EQ(f.manager.view().least_loaded(InstanceTag::kPrompt), 1u);
  ASSERT_TRUE(f.manager.scale_down(InstanceTag::kPrompt));
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kDraining);
  EXPECT_EQ(f.manager.view().get_status_summary(), status(3, 0, 1, 4, 4));
  EXPECT_TRUE(f.logged("[ScalingManager] Instance 1 draining started at 0.00"));
  // A draining instance gets no new request.
  f.submit(2, 10, 3);
  EXPECT_EQ(f.cluster.fleet().view(1)->requests, 1);
  f.run_until(0.5);
  // Its request finished prefill and left; the next check (1 s) removes it, then its
  // server (one 8-GPU instance per 8-GPU server).
  EXPECT_TRUE(f.cluster.fleet().drained(1));
  f.run_until(1.0);
  EXPECT_FALSE(f.cluster.fleet().view(1).has_value());
  EXPECT_EQ(f.manager.view().get_status_summary(), status(3, 0, 0, 3, 3));
  EXPECT_TRUE(f.logged("[ScalingManager] Instance 1 removed at 1.00"));
  EXPECT_TRUE(f.logged("[ScalingManager] Auto scale-down server 1 after instance removal"));
  f.run_until(60);
  EXPECT_EQ(f.sink.done.size(), 3u);
}

TEST(ScalingManagerTest, ScaleDownOfATokenInstanceTakesTheOneWithLeastKvMemory) {
  Fixture f({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 3}});
  f.submit(0, 3000, 400);
  f.run_until(0.2);
  f.submit(1, 100, 400);
  f.run_until(0.5);
  // Token instances 1 and 2 hold the two requests' KV; 3 holds none.
  EXPECT_EQ(f.manager.view().least_loaded(InstanceTag::kToken), 3u);
  ASSERT_TRUE(f.manager.scale_down(InstanceTag::kToken));
  EXPECT_EQ(f.cluster.fleet().view(3)->state, InstanceState::kDraining);
}

TEST(ScalingManagerTest, AScaledUpInstanceOnItsOwnServerTakesTheServerWithItWhenRemoved) {
  Fixture f({{InstanceTag::kMixed, 1}}, with_delay(2));
  ASSERT_TRUE(f.manager.scale_up_full(InstanceTag::kMixed));
  f.run_until(2);
  ASSERT_TRUE(f.manager.scale_down_full(1));
  f.run_until(3);
  EXPECT_EQ(f.manager.view().get_status_summary(), status(1, 0, 0, 1, 1));
  EXPECT_TRUE(f.logged("[ScalingManager] Auto scale-down server 1 after instance removal"));
  EXPECT_EQ(f.manager.view().counts().servers_removed, 1u);
}

TEST(ScalingManagerTest, ActionsBeyondTheLimitsAreRefusedAndLoggedAsBlocked) {
  ScalingConfig limits;
  limits.max_total_instances = 3;
  limits.min_instances_per_pool = 2;
  Fixture f({{InstanceTag::kMixed, 2}}, limits);
  EXPECT_FALSE(f.manager.scale_down(InstanceTag::kMixed));
  EXPECT_TRUE(f.logged("[Action Blocked] Cannot remove mixed, min limit reached"));
  ASSERT_TRUE(f.manager.scale_up_full(InstanceTag::kMixed));
  EXPECT_FALSE(f.manager.scale_up_full(InstanceTag::kMixed));
  EXPECT_TRUE(f.logged("[Action Blocked] Max cluster size reached (3)"));
  // STARTING instances do not count toward the minimum.
  EXPECT_FALSE(f.manager.scale_down(InstanceTag::kMixed));
  f.run_until(10);
  EXPECT_TRUE(f.manager.scale_down(InstanceTag::kMixed));
  EXPECT_EQ(f.manager.view().counts().blocked, 3u);
  EXPECT_EQ(f.manager.view().counts().scale_ups, 1u);
  EXPECT_EQ(f.manager.view().counts().scale_downs, 1u);
}

TEST(ScalingManagerTest, TheClusterRefusesToDrainTheLastInstanceAPoolRoutesTo) {
  engine::Simulation sim(1);
  Sink sink;
  LlmCluster cluster(sim, base_config({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 1}}), sink);
  EXPECT_FALSE(cluster.fleet().drain(0));
  EXPECT_FALSE(cluster.fleet().drain(1));
  EXPECT_EQ(cluster.fleet().view(0)->state, InstanceState::kActive);
}

TEST(ScalingManagerTest, PastTheDrainTimeoutRequestsMoveToActiveInstancesAndNoneIsLost) {
  ScalingConfig scaling;
  scaling.drain_timeout = SimTime::from_seconds(2);
  Fixture f({{InstanceTag::kMixed, 2}}, scaling);
  // Long outputs on both instances (20 ms per decode iteration: 2,000 tokens take 40 s).
  for (int i = 0; i < 6; ++i) f.submit(i, 200, 2000);
  f.run_until(1);
  ASSERT_TRUE(f.manager.scale_down_full(1));
  const auto moving = f.cluster.fleet().view(1)->requests;
  ASSERT_GT(moving, 0);
  f.run_until(3.1);
  EXPECT_EQ(f.manager.view().counts().evacuations, 1u);
  EXPECT_EQ(f.cluster.fleet().view(1)->requests, 0) << "evacuated at the first iteration boundary after 3 s";
  f.run_until(4);
  EXPECT_EQ(f.cluster.fleet().view(1), std::nullopt) << "removed at the next check";
  EXPECT_EQ(f.cluster.fleet().view(0)->requests, 6);
  f.run_until(1000);
  ASSERT_EQ(f.sink.done.size(), 6u);
  std::int64_t migrated = 0;
  for (const auto& r : f.sink.done) {
    EXPECT_EQ(r.status, metrics::RequestStatus::kCompleted);
    EXPECT_EQ(*r.instance, 0u);
    migrated += r.migrations;
  }
  EXPECT_EQ(migrated, moving);
}

TEST(ScalingManagerTest, ADeactivatedInstanceStaysInactiveAndPassesThroughStartingWhenReactivated) {
  Fixture f({{InstanceTag::kMixed, 2}}, with_delay(3));
  ASSERT_TRUE(f.manager.deactivate(1));
  f.run_until(1);
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kInactive);
  EXPECT_EQ(f.cluster.fleet().view(1)->server, std::nullopt);
  EXPECT_EQ(f.cluster.fleet().servers().count(), 1u) << "an INACTIVE instance releases its server";
  EXPECT_EQ(f.cluster.usage().gpu_us, 8.0 * 2 * 1e6) << "two instances' GPUs for the first second, then one";
  ASSERT_TRUE(f.manager.reactivate(1));
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kStarting);
  EXPECT_EQ(f.cluster.fleet().servers().count(), 2u);
  f.run_until(4);
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kActive);
}

// The cluster's INACTIVE index against a walk over every instance, through random
// scale-ups, drains to INACTIVE, restarts and removals: first_inactive is always the
// lowest-id INACTIVE instance of its pool (what an elastic scale-up restarts).
TEST(ScalingManagerTest, TheFirstInactiveInstanceIsTheOneAWalkFinds) {
  Fixture f({{InstanceTag::kMixed, 4}}, with_delay(2));
  engine::Rng rng(7);
  std::uint64_t request = 0;
  std::size_t inactive_seen = 0;
  for (int step = 0; step < 400; ++step) {
    const auto views = f.cluster.fleet().views();
    const auto pick = [&] { return views[rng.uniform_int(views.size())].id; };
    switch (rng.uniform_int(6)) {
      case 0: (void)f.manager.scale_up_full(InstanceTag::kMixed); break;
      case 1: (void)f.manager.deactivate(pick()); break;
      case 2: (void)f.manager.reactivate(pick()); break;
      case 3: (void)f.manager.scale_down_full(pick()); break;
      case 4: f.submit(request++, 200, 50); break;
      default: f.run_until(f.sim.now().seconds() + rng.uniform() * 3); break;
    }
    std::optional<std::uint32_t> walked;
    for (const auto& view : f.cluster.fleet().views()) {
      if (view.tag == InstanceTag::kMixed && view.state == InstanceState::kInactive) {
        walked = view.id;
        ++inactive_seen;
        break;
      }
    }
    ASSERT_EQ(f.cluster.fleet().pools().first_inactive(InstanceTag::kMixed), walked) << "step " << step;
    ASSERT_EQ(f.cluster.check_invariants(), std::vector<std::string>{}) << "step " << step;
  }
  EXPECT_GT(inactive_seen, 50u);  // the walk did find INACTIVE instances, often
}

TEST(ScalingManagerTest, AMigratedInstanceDrainsThenServesTheOtherPoolOnItsOwnServer) {
  Fixture f({{InstanceTag::kPrompt, 2}, {InstanceTag::kToken, 1}});
  f.submit(0, 5000, 50);
  f.submit(1, 100, 50);
  // Prompt instance 1 has fewer pending tokens: it is the one that moves.
  ASSERT_TRUE(f.manager.migrate_pool(InstanceTag::kPrompt, InstanceTag::kToken));
  EXPECT_EQ(f.cluster.fleet().view(1)->state, InstanceState::kDraining);
  EXPECT_EQ(f.cluster.fleet().view(1)->tag, InstanceTag::kPrompt);
  EXPECT_TRUE(f.logged("[ScalingManager] Instance 1 migrating to token"));
  f.run_until(1.0);
  const auto moved = f.cluster.fleet().view(1);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->state, InstanceState::kActive);
  EXPECT_EQ(moved->tag, InstanceTag::kToken);
  EXPECT_EQ(moved->server, 1u) << "no new server";
  EXPECT_EQ(f.cluster.fleet().servers().count(), 3u);
  EXPECT_EQ(f.manager.view().count(InstanceTag::kPrompt, InstanceState::kActive), 1u);
  EXPECT_EQ(f.manager.view().count(InstanceTag::kToken, InstanceState::kActive), 2u);
  EXPECT_TRUE(f.logged("[ScalingManager] Instance 1 active as token at 1.00"));
  EXPECT_EQ(f.manager.view().counts().migrations, 1u);
  EXPECT_EQ(f.manager.view().counts().scale_ups + f.manager.view().counts().scale_downs, 0u);
  EXPECT_TRUE(f.cluster.check_invariants().empty());
  // It decodes now: of the next requests, some land on it, and every request completes.
  for (int i = 2; i < 12; ++i) f.submit(i, 200, 400);
  f.run_until(1000);
  EXPECT_EQ(f.sink.done.size(), 12u);
  bool decoded_there = false;
  for (const auto& r : f.sink.done) {
    EXPECT_EQ(r.status, metrics::RequestStatus::kCompleted);
    decoded_there = decoded_there || (r.id >= 2 && r.instance == 1u);
  }
  EXPECT_TRUE(decoded_there);
  EXPECT_TRUE(f.cluster.check_invariants().empty());
}

TEST(ScalingManagerTest, MigrationsThatWouldBreakAPoolAreBlocked) {
  Fixture split({{InstanceTag::kPrompt, 1}, {InstanceTag::kToken, 1}});
  EXPECT_FALSE(split.manager.migrate_pool(InstanceTag::kPrompt, InstanceTag::kToken));
  EXPECT_TRUE(split.logged("[Action Blocked] Cannot remove prompt, min limit reached"));
  EXPECT_FALSE(split.manager.migrate(0, InstanceTag::kPrompt));
  EXPECT_FALSE(split.manager.migrate(0, InstanceTag::kMixed));
  Fixture mixed({{InstanceTag::kMixed, 3}});
  EXPECT_FALSE(mixed.manager.migrate_pool(InstanceTag::kMixed, InstanceTag::kToken));
  EXPECT_TRUE(mixed.logged("[Action Blocked] Cannot migrate mixed instance 0 to token, only between prompt and token"));
  EXPECT_EQ(split.manager.view().counts().blocked, 3u);
  EXPECT_EQ(split.manager.view().counts().migrations, 0u);
  EXPECT_EQ(split.manager.view().get_status_summary(), status(2, 0, 0, 2, 2));
}

TEST(ScalingManagerTest, GpuHoursAndCostCountInstancesAndServersForTheTimeTheyExist) {
  Fixture f({{InstanceTag::kMixed, 1}}, with_delay(10));
  f.run_until(3600);
  ASSERT_TRUE(f.manager.scale_up_full(InstanceTag::kMixed));
  f.run_until(7200);
  const auto usage = f.cluster.usage();
  // One 8-GPU instance for 2 h, another for 1 h (STARTING included).
  EXPECT_DOUBLE_EQ(usage.gpu_us / 3.6e9, 24.0);
  EXPECT_DOUBLE_EQ(usage.cost_usd, 3 * f.cluster.config().sku.cost_per_hour);
  // Serving capacity excludes the 10 s of STARTING.
  EXPECT_DOUBLE_EQ(usage.capacity_unit_us / 1e6, 7200.0 + 3590.0);
}

}  // namespace
}  // namespace meshsim::cluster
