// The scheduling core's hot paths. Placement of an agent's PG at 10k nodes: the
// ClusterState's free-capacity index against place_bundles' scan of every node.
// Preemption evaluation and victim selection at 1k, 10k and 100k running tasks: the
// VictimIndex against the linear scan kept in linear_reference.hpp, on
// the same tasks and queries in the same run. Each query is also timed on its own, so
// the p99 is reported (counter p99_us) next to Google Benchmark's mean.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "scheduler/scheduler.hpp"
#include "scheduler/victim_index.hpp"
#include "experiments/bench/linear_reference.hpp"

namespace meshsim::scheduler {
namespace {

const char* const kPools[] = {"train", "reward", "rollout", "serving"};
const char* const kTiers[] = {"premium", "standard", "batch"};

PreemptionPolicy bench_policy() {
  PreemptionPolicy policy;
  policy.label_preemption_rules = {{"tier", {{"premium", {"standard", "batch"}}, {"standard", {"batch"}}}}};
  policy.protected_pools = {"serving"};
  return policy;
}

// A cluster's running tasks: four pools, three tiers, priorities 0-9, two resource
// shapes, estimated durations up to an hour, started over the last hour.
std::vector<VictimIndex::TaskInfo> workload(std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<VictimIndex::TaskInfo> tasks;
  tasks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    VictimIndex::TaskInfo task;
    task.seq = i + 1;
    task.pool = kPools[rng() % 4];
    task.labels = {{"tier", kTiers[rng() % 3]}, {"job", "j" + std::to_string(rng() % 1000)}};
    task.freed = ResourceVector::of(rng() % 2 == 0 ? 8 : 16, 65536, rng() % 2 == 0 ? 1 : 2);
    task.priority = static_cast<double>(rng() % 10);
    task.start = 3600.0 * std::uniform_real_distribution<double>(0, 1)(rng);
    task.deadline = task.start + 3600.0 * std::uniform_real_distribution<double>(0, 1)(rng);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

std::vector<IncomingTask> queries() {
  std::mt19937_64 rng(7);
  std::vector<IncomingTask> out;
  for (int i = 0; i < 256; ++i) {
    out.push_back(IncomingTask{static_cast<double>(rng() % 12), kPools[rng() % 4], {{"tier", kTiers[rng() % 3]}}});
  }
  return out;
}

constexpr double kNow = 3600.0;

void report_p99(benchmark::State& state, std::vector<double>& samples_us) {
  if (samples_us.empty()) return;
  const auto p99 = samples_us.begin() + static_cast<std::ptrdiff_t>(samples_us.size() * 99 / 100);
  std::nth_element(samples_us.begin(), p99, samples_us.end());
  state.counters["p99_us"] = *p99;
}

template <typename Fn>
void timed_loop(benchmark::State& state, Fn&& query) {
  std::vector<double> samples_us;
  samples_us.reserve(1 << 16);
  std::size_t i = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    query(i++);
    const auto t1 = std::chrono::steady_clock::now();
    if (samples_us.size() < (1u << 16)) samples_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report_p99(state, samples_us);
}

void fill_index(VictimIndex& index, std::size_t tasks) {
  index.configure(bench_policy());
  for (const auto& task : workload(tasks)) index.add(task, kNow);
}

void BM_EvaluateIndexed(benchmark::State& state) {
  VictimIndex index;
  fill_index(index, static_cast<std::size_t>(state.range(0)));
  const auto incoming = queries();
  timed_loop(state, [&](std::size_t i) {
    benchmark::DoNotOptimize(index.evaluate(incoming[i % incoming.size()], kNow, 16));
  });
}

void BM_EvaluateLinear(benchmark::State& state) {
  const auto tasks = workload(static_cast<std::size_t>(state.range(0)));
  const auto policy = bench_policy();
  const auto incoming = queries();
  timed_loop(state, [&](std::size_t i) {
    benchmark::DoNotOptimize(testing::linear_evaluate(tasks, policy, incoming[i % incoming.size()], kNow, 16));
  });
}

// Victim selection's inner loop: the best victims of the incoming task's own pool that
// give back resources (what submit_task_with_preemption draws on when the quota binds),
// four of them.
void BM_SelectVictimsIndexed(benchmark::State& state) {
  VictimIndex index;
  fill_index(index, static_cast<std::size_t>(state.range(0)));
  const auto incoming = queries();
  timed_loop(state, [&](std::size_t i) {
    const IncomingTask& q = incoming[i % incoming.size()];
    auto cursor = index.open(q, kNow, [&](const VictimIndex::Class& c) { return c.pool == q.pool; });
    for (int v = 0; v < 4; ++v) benchmark::DoNotOptimize(cursor.next());
  });
}

void BM_SelectVictimsLinear(benchmark::State& state) {
  const auto tasks = workload(static_cast<std::size_t>(state.range(0)));
  const auto policy = bench_policy();
  const auto incoming = queries();
  timed_loop(state, [&](std::size_t i) {
    const IncomingTask& q = incoming[i % incoming.size()];
    // The straightforward way: judge every task, keep the pool's, take the best four.
    auto all = testing::linear_evaluate(tasks, policy, q, kNow, tasks.size());
    std::size_t taken = 0;
    for (const auto& candidate : all.best) {
      if (tasks[candidate.seq - 1].pool != q.pool) continue;
      benchmark::DoNotOptimize(candidate);
      if (++taken == 4) break;
    }
  });
}

// submit_task_with_preemption end to end at 100k running tasks: a high-priority task
// preempts the best victim, completes, and the victim is submitted again.
// A task of one CPU in "pool".
TaskSpec one_cpu_task(std::string id, double priority, double estimated_duration) {
  TaskSpec spec;
  spec.task_id = std::move(id);
  spec.pool = "pool";
  spec.actor_class = "w";
  spec.resources = ResourceVector::of(1, 1024, 0);
  spec.priority = priority;
  spec.estimated_duration = estimated_duration;
  return spec;
}

void BM_SubmitWithPreemptionCycle(benchmark::State& state) {
  struct FixedClock : Clock {
    SimTime now() const override { return SimTime::from_seconds(10.0); }
  } clock;
  Scheduler scheduler(clock);
  const auto n = static_cast<std::size_t>(state.range(0));
  scheduler.cluster().add_node({"big", ResourceVector::of(1e7, 1e9, 1e6), {}, "h100"});
  (void)scheduler.create_pool({"pool", {}, ResourceVector::of(static_cast<double>(n), 1024.0 * static_cast<double>(n), 0), 0,
                               PlacementStrategy::kStrictPack});
  std::mt19937_64 rng(3);
  for (std::size_t i = 0; i < n; ++i) {
    const auto priority = static_cast<double>(rng() % 5);
    (void)scheduler.submit_task_with_preemption(one_cpu_task("t" + std::to_string(i), priority, 600.0));
  }
  std::size_t i = 0;
  timed_loop(state, [&](std::size_t) {
    const auto result = scheduler.submit_task_with_preemption(
        one_cpu_task("urgent-" + std::to_string(i++), 9.0, 0.0));
    const std::string victim = scheduler.tasks().find(result.preempted.at(0))->id;
    (void)scheduler.complete("urgent-" + std::to_string(i - 1));
    const Task& task = *scheduler.tasks().find(victim);
    (void)scheduler.submit_task_with_preemption(
        one_cpu_task(victim, task.priority, 600.0));
  });
}

// 10k nodes of two shapes, a third full, a third half used; each iteration places and
// removes one single-bundle agent PG (what create_agent does).
ClusterState busy_cluster(std::size_t nodes) {
  ClusterState cluster;
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i < nodes; ++i) {
    cluster.add_node({"n" + std::to_string(i), ResourceVector::of(i % 2 ? 96 : 192, 1'048'576, 8), {}, "h100"});
    const int fill = static_cast<int>(rng() % 3);
    for (int g = 0; g < fill * 4; ++g) {
      (void)cluster.create_placement_group("fill", {ResourceVector::of(8, 65536, 1)}, PlacementStrategy::kStrictPack, false);
    }
  }
  return cluster;
}

void BM_PlaceIndexed(benchmark::State& state) {
  ClusterState cluster = busy_cluster(static_cast<std::size_t>(state.range(0)));
  const ResourceVector shapes[] = {ResourceVector::of(8, 65536, 1), ResourceVector::of(32, 262144, 4),
                                   ResourceVector::of(16, 131072, 2)};
  timed_loop(state, [&](std::size_t i) {
    auto pg = cluster.create_placement_group("agent", {shapes[i % 3]}, PlacementStrategy::kStrictPack, false);
    (void)cluster.remove_placement_group(*pg.id);
  });
}

void BM_PlaceLinear(benchmark::State& state) {
  ClusterState cluster = busy_cluster(static_cast<std::size_t>(state.range(0)));
  std::vector<ResourceVector> free;
  std::vector<bool> eligible;
  for (const auto& node : cluster.nodes()) {
    free.push_back(node.ledger.available());
    eligible.push_back(true);
  }
  const ResourceVector shapes[] = {ResourceVector::of(8, 65536, 1), ResourceVector::of(32, 262144, 4),
                                   ResourceVector::of(16, 131072, 2)};
  timed_loop(state, [&](std::size_t i) {
    const auto nodes = place_bundles({shapes[i % 3]}, PlacementStrategy::kStrictPack, free, eligible);
    benchmark::DoNotOptimize(nodes);
  });
}

BENCHMARK(BM_PlaceIndexed)->Arg(10000);
BENCHMARK(BM_PlaceLinear)->Arg(10000);
BENCHMARK(BM_EvaluateIndexed)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_EvaluateLinear)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_SelectVictimsIndexed)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_SelectVictimsLinear)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_SubmitWithPreemptionCycle)->Arg(1000)->Arg(100000);

}  // namespace
}  // namespace meshsim::scheduler
