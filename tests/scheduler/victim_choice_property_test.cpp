// Victim choice on random clusters against a brute-force judge: a submission that some
// single running task makes room for (its node's free GPUs plus its own, within the pool
// quota) preempts exactly one such task; one that no single task can serve never
// preempts exactly one. Guards the shortcuts in Scheduler::choose_victims (the per-class
// bound that skips classes with no lone victim big enough) against the plain rule.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "scheduler/manual_world.hpp"
#include "scheduler/scheduler.hpp"

namespace meshsim::scheduler {
namespace {

struct Scenario {
  ManualWorld world;
  Scheduler scheduler{world, &world, &world};
};

// Nodes of 2, 4 or 8 GPUs, pools "p" and "q" (random GPU quotas), filled with running
// tasks of 1-4 GPUs at low priorities.
void build(Scenario& s, std::mt19937_64& rng) {
  const auto pick = [&](std::initializer_list<int> values) {
    return *(values.begin() + std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng));
  };
  const int nodes = std::uniform_int_distribution<int>(1, 8)(rng);
  for (int n = 0; n < nodes; ++n) {
    s.scheduler.cluster().add_node({"n" + std::to_string(n), ResourceVector::of(1000, 1e6, pick({2, 4, 8})), {}, "gpu"});
  }
  for (const char* pool : {"p", "q"}) {
    ASSERT_TRUE(s.scheduler.ensure_pool(
        {pool, {}, ResourceVector::of(1e5, 1e9, pick({4, 8, 16, 1000})), 0, PlacementStrategy::kStrictPack}));
  }
  const int tasks = std::uniform_int_distribution<int>(0, 40)(rng);
  for (int t = 0; t < tasks; ++t) {
    TaskSpec spec;
    spec.task_id = "t" + std::to_string(t);
    spec.pool = pick({0, 1}) == 0 ? "p" : "q";
    spec.resources = ResourceVector::of(1, 1024, pick({1, 1, 2, 4}));
    spec.priority = pick({0, 1, 2, 3});
    spec.estimated_duration = pick({0, 50, 500});
    (void)s.scheduler.submit_task_with_preemption(spec);  // some do not fit: fine
    s.world.advance(std::uniform_real_distribution<double>(0.0, 5.0)(rng));
  }
  s.world.advance(1000.0);  // every task past the minimum runtime
}

TEST(VictimChoicePropertyTest, OneVictimExactlyWhenOneVictimIsEnough) {
  int single = 0, several = 0, none = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    Scenario s;
    build(s, rng);
    if (HasFatalFailure()) return;
    TaskSpec incoming;
    incoming.task_id = "incoming";
    incoming.pool = "p";
    incoming.resources = ResourceVector::of(1, 1024, std::uniform_int_distribution<int>(1, 8)(rng));
    incoming.priority = 10;
    const IncomingTask judged{incoming.priority, incoming.pool, {}};
    const auto allowed = s.scheduler.evaluate_preemption(judged, 1000).candidates;
    const auto& cluster = s.scheduler.cluster();
    const ResourceVector quota = s.scheduler.agents().pool("p")->ledger.available();
    const bool fits_now = cluster.can_place({incoming.resources}, PlacementStrategy::kStrictPack) &&
                          incoming.resources.fits_in(quota);
    // The brute-force judge: every allowed task alone.
    std::set<std::string> enough_alone;
    for (const auto& candidate : allowed) {
      const Agent* agent = s.scheduler.agents().agent(candidate.agent_name);
      ASSERT_NE(agent, nullptr);
      const ResourceVector room = cluster.nodes()[agent->node].ledger.available() + agent->spec.resources;
      const ResourceVector pool_room = candidate.pool_name == "p" ? quota + agent->spec.resources : quota;
      if (incoming.resources.fits_in(room) && incoming.resources.fits_in(pool_room)) {
        enough_alone.insert(candidate.task_id);
      }
    }
    // The quota alone may be short while nodes have room: then any same-pool task frees it.
    if (cluster.can_place({incoming.resources}, PlacementStrategy::kStrictPack)) {
      for (const auto& candidate : allowed) {
        const Agent* agent = s.scheduler.agents().agent(candidate.agent_name);
        if (candidate.pool_name == "p" && incoming.resources.fits_in(quota + agent->spec.resources)) {
          enough_alone.insert(candidate.task_id);
        }
      }
    }
    const auto result = s.scheduler.submit_task_with_preemption(incoming);
    SCOPED_TRACE("seed " + std::to_string(seed));
    if (fits_now) {
      EXPECT_TRUE(result.result.success);
      EXPECT_TRUE(result.preempted.empty());
    } else if (!enough_alone.empty()) {
      ASSERT_TRUE(result.result.success) << result.result.error;
      ASSERT_EQ(result.preempted.size(), 1u);
      const std::string victim = s.scheduler.tasks().find(result.preempted[0])->id;
      EXPECT_EQ(enough_alone.count(victim), 1u) << victim;
      ++single;
    } else {
      EXPECT_NE(result.preempted.size(), 1u);
      ++(result.preempted.empty() ? none : several);
    }
    EXPECT_EQ(s.scheduler.check_invariants(), std::vector<std::string>{});
  }
  // The random clusters reach every branch.
  EXPECT_GT(single, 20);
  EXPECT_GT(several, 20);
  EXPECT_GT(none, 20);
}

}  // namespace
}  // namespace meshsim::scheduler
