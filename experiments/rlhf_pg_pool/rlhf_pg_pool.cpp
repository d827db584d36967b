// R1 (seed 000's pg_pool_rlhf_full_demo) on the scheduling core: rollout, reward and
// train roles on a pool with reserved and dynamic placement groups. Prints the scene log
// and the final stats() and pg_pool_stats(), as the seed's demo does.
//
//   build/experiments/rlhf_pg_pool/rlhf_pg_pool
#include <iostream>

#include "scheduler/scheduler.hpp"
#include "sim/script/script_args.hpp"

namespace {

using namespace meshsim::scheduler;

struct DemoClock : Clock {
  SimTime now() const override { return t; }
  SimTime t = SimTime::zero();
};

TaskSpec role(const std::string& id, const std::string& name, double priority, double cpu, double memory) {
  return TaskSpec{{priority, {{"role", name}}, 25.0, "", 0.0}, id, "rlhf-pg-pool", "RLHFWorker",
                  ResourceVector::of(cpu, memory, 0), ""};
}

void report(const Scheduler& core, const std::string& what, const SubmitResult& result) {
  std::cout << "  submit " << what << ": success=" << (result.result.success ? "True" : "False");
  if (!result.result.success) std::cout << " (" << result.result.error << ")";
  for (const auto& victim : core.tasks().names(result.preempted)) std::cout << " preempted=" << victim;
  if (result.pg_reused) std::cout << " pg_reused";
  std::cout << "\n";
}

void stats_line(const Scheduler& scheduler) {
  const auto pg = scheduler.pg_pools().stats().at("rlhf-pg-pool");
  std::cout << "  total_preemptions=" << scheduler.get_preemption_stats().total_preemptions
            << " reserved_in_use=" << pg.reserved_in_use << "/" << pg.reserved_total
            << " dynamic_in_use=" << pg.dynamic_in_use << " reuse_hits=" << pg.reuse_hits << "\n";
}

}  // namespace

int main() {
  DemoClock clock;
  Scheduler scheduler(clock);
  scheduler.cluster().add_node({"local", ResourceVector::of(8, 16384, 0), {}, "cpu"});

  PgPoolConfig pg_pool;
  pg_pool.enable = true;
  pg_pool.high_priority_pg_specs = {ResourceVector::of(2, 2048, 0), ResourceVector::of(2, 2048, 0)};
  pg_pool.max_dynamic_pgs = 2;
  (void)scheduler.ensure_pool({"rlhf-pg-pool", {}, ResourceVector::of(6, 8192, 0), 0, PlacementStrategy::kStrictPack},
                              pg_pool);
  PolicyUpdate policy;
  policy.label_preemption_rules = LabelRules{{"role", {{"train", {"reward", "rollout"}}, {"reward", {"rollout"}}}}};
  policy.preemption_aggressiveness = "MEDIUM";
  policy.cancel_timeout = 0.5;
  policy.enable_cross_pool_preemption = false;
  (void)scheduler.update_preemption_policy(policy);

  std::cout << "=== Scene 1: rollouts start (dynamic PGs) ===\n";
  report(scheduler, "rollout-00", scheduler.submit_with_pg_preemption(role("rollout-00", "rollout", 1.0, 1.5, 2048)));
  clock.t += SimTime::from_seconds(1);
  report(scheduler, "rollout-01", scheduler.submit_with_pg_preemption(role("rollout-01", "rollout", 1.0, 1.5, 2048)));
  stats_line(scheduler);

  std::cout << "=== Scene 2: reward arrives (reserved PG) ===\n";
  clock.t += SimTime::from_seconds(1);
  report(scheduler, "reward-00", scheduler.submit_with_pg_preemption(role("reward-00", "reward", 5.0, 2, 2048)));
  stats_line(scheduler);

  std::cout << "=== Scene 3: train, PG path first, then the preemption fallback ===\n";
  clock.t += SimTime::from_seconds(1);
  const TaskSpec train = role("train-00", "train", 9.0, 2, 2048);
  const auto pg_path = scheduler.submit_with_pg_preemption(train);
  report(scheduler, "train-00 (PG path)", pg_path);
  if (!pg_path.result.success) {
    std::cout << "  PG path failed; falling back to submit_task_with_preemption\n";
    report(scheduler, "train-00 (fallback)", scheduler.submit_task_with_preemption(train));
  }
  stats_line(scheduler);

  std::cout << "=== Scene 4: rollout scale-out preempts a rollout ===\n";
  clock.t += SimTime::from_seconds(1);
  report(scheduler, "rollout-extra-00", scheduler.submit_task_with_preemption(role("rollout-extra-00", "rollout", 2.0, 1.5, 2048)));
  stats_line(scheduler);

  std::cout << "=== Cleanup: complete, shutdown ===\n";
  for (const char* id : {"rollout-00", "train-00", "rollout-extra-00"}) (void)scheduler.complete(id);
  scheduler.shutdown();
  std::cout << "stats() = " << meshsim::script::to_json(summarize(scheduler)).dump(1) << "\n";
  std::cout << "get_preemption_stats() = " << meshsim::script::to_json(scheduler.get_preemption_stats()).dump(1) << "\n";
  std::cout << "pg_pool_stats() = " << meshsim::script::to_json(scheduler.pg_pools().stats().at("rlhf-pg-pool")).dump(1)
            << "\n";
  const auto problems = scheduler.check_invariants();
  std::cout << "node and pool ledgers after shutdown: "
            << (scheduler.cluster().placement_groups().empty() && problems.empty() ? "all zero" : "NOT zero") << "\n";
  return problems.empty() ? 0 : 1;
}
