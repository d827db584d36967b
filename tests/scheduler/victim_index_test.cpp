#include "scheduler/victim_index.hpp"

#include <gtest/gtest.h>

#include <random>

#include "experiments/bench/linear_reference.hpp"

namespace meshsim::scheduler {
namespace {

const std::vector<std::string> kPools = {"pool-a", "pool-b", "pool-c"};
const std::vector<std::string> kTiers = {"premium", "standard", "batch", ""};

VictimIndex::TaskInfo random_task(std::mt19937_64& rng, std::uint64_t seq, double now, bool coarse_priorities) {
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  VictimIndex::TaskInfo task;
  task.seq = seq;
  task.pool = kPools[pick(rng) % kPools.size()];
  if (const auto& tier = kTiers[pick(rng) % kTiers.size()]; !tier.empty()) task.labels["tier"] = tier;
  if (pick(rng) % 2 == 0) task.labels["team"] = "t" + std::to_string(pick(rng) % 5);
  task.freed = ResourceVector::of(pick(rng) % 3, 1024, 0);
  task.priority = coarse_priorities ? static_cast<double>(pick(rng) % 10)
                                    : std::uniform_real_distribution<double>(0.0, 10.0)(rng);
  task.start = now - std::uniform_real_distribution<double>(0.0, 100.0)(rng);
  // A third of the tasks have no estimate (remaining time 0).
  task.deadline = task.start + (pick(rng) % 3 == 0 ? 0.0 : std::uniform_real_distribution<double>(0.0, 200.0)(rng));
  return task;
}

PreemptionPolicy random_policy(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  PreemptionPolicy policy;
  policy.same_pool_priority_threshold = std::floor(u(rng) * 4) / 2;  // 0 .. 1.5, sometimes below min score
  policy.cross_pool_priority_threshold = 2.0 + std::floor(u(rng) * 6);
  policy.remaining_time_weight = u(rng) < 0.2 ? 0.0 : 0.05 + 0.1 * u(rng);
  policy.min_preempt_score = u(rng);
  policy.enable_cross_pool_preemption = u(rng) < 0.7;
  if (u(rng) < 0.4) policy.protected_pools = {"pool-c"};
  if (u(rng) < 0.7) policy.label_preemption_rules = {{"tier", {{"premium", {"standard", "batch"}}, {"standard", {"batch"}}}}};
  policy.enable_label_preemption = u(rng) < 0.8;
  policy.label_priority_threshold = u(rng);
  if (u(rng) < 0.3) policy.label_max_priority_deficit = 2.0 * u(rng);
  policy.min_runtime_before_preemption = u(rng) < 0.5 ? 0.0 : 50.0 * u(rng);
  return policy;
}

void expect_same(const VictimIndex::Evaluation& indexed, const VictimIndex::Evaluation& reference,
                 const std::string& where) {
  ASSERT_EQ(indexed.eligible, reference.eligible) << where;
  ASSERT_EQ(indexed.best.size(), reference.best.size()) << where;
  for (std::size_t i = 0; i < reference.best.size(); ++i) {
    EXPECT_EQ(indexed.best[i].seq, reference.best[i].seq) << where << " rank " << i;
    EXPECT_EQ(indexed.best[i].score, reference.best[i].score) << where << " rank " << i;
    EXPECT_EQ(indexed.best[i].reason, reference.best[i].reason) << where << " rank " << i;
  }
}

// The index returns exactly what judging every task would, on random workloads with
// random policies, as tasks come and go and the clock moves.
TEST(VictimIndexTest, AgreesWithTheLinearScanOnRandomWorkloads) {
  std::mt19937_64 rng(20261121);
  for (int round = 0; round < 60; ++round) {
    const PreemptionPolicy policy = random_policy(rng);
    const bool coarse = round % 2 == 0;
    VictimIndex index;
    index.configure(policy);
    std::vector<VictimIndex::TaskInfo> tasks;
    double now = 1000.0;
    std::uint64_t seq = 1;
    for (int step = 0; step < 30; ++step) {
      for (int i = 0; i < 40; ++i) {
        tasks.push_back(random_task(rng, seq++, now, coarse));
        index.add(tasks.back(), now);
      }
      for (int i = 0; i < 10 && !tasks.empty(); ++i) {
        const std::size_t victim = rng() % tasks.size();
        index.remove(tasks[victim].seq);
        tasks.erase(tasks.begin() + static_cast<std::ptrdiff_t>(victim));
      }
      now += std::uniform_real_distribution<double>(0.0, 20.0)(rng);
      IncomingTask incoming{std::uniform_real_distribution<double>(0.0, 12.0)(rng), kPools[rng() % kPools.size()], {}};
      if (const auto& tier = kTiers[rng() % kTiers.size()]; !tier.empty()) incoming.labels["tier"] = tier;
      const std::size_t k = 1 + rng() % 20;
      const auto where = "round " + std::to_string(round) + " step " + std::to_string(step);
      expect_same(index.evaluate(incoming, now, k), testing::linear_evaluate(tasks, policy, incoming, now, k),
                  where);
      ASSERT_EQ(index.check_invariants(), std::vector<std::string>{});
    }
  }
}

TEST(VictimIndexTest, ARebuildAfterAPolicyChangeKeepsEveryTask) {
  std::mt19937_64 rng(7);
  PreemptionPolicy policy;
  VictimIndex index;
  index.configure(policy);
  std::vector<VictimIndex::TaskInfo> tasks;
  for (std::uint64_t seq = 1; seq <= 500; ++seq) {
    tasks.push_back(random_task(rng, seq, 100.0, true));
    index.add(tasks.back(), 100.0);
  }
  policy.remaining_time_weight = 0.3;
  policy.min_runtime_before_preemption = 20.0;
  policy.label_preemption_rules = {{"team", {{"t0", {"t1"}}}}};
  index.configure(policy);
  EXPECT_EQ(index.size(), 500u);
  const IncomingTask incoming{8.0, "pool-a", {{"team", "t0"}}};
  expect_same(index.evaluate(incoming, 101.0, 16), testing::linear_evaluate(tasks, policy, incoming, 101.0, 16),
              "after rebuild");
}

}  // namespace
}  // namespace meshsim::scheduler
