// Properties of LlmCluster over random deployments and workloads (tests/sim/serving_cases.hpp):
// every run ends with every request completed or dropped (no KV deadlock in either
// allocation mode), and a folded run reports exactly what the unfolded run reports.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <map>
#include <string>

#include "sim/engine/rng.hpp"
#include "tests/shared_data.hpp"
#include "tests/sim/serving_cases.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::cluster {
namespace {

using testing::draw_serving_case;
using testing::run_case;

struct RngChoice {
  engine::Rng rng;
  std::uint64_t pick(std::uint64_t bound) { return rng.uniform_int(bound); }
};

void expect_everything_accounted(const testing::ServingCase& c, const testing::RunResult& r) {
  EXPECT_EQ(r.counts.arrived, c.requests.size());
  EXPECT_EQ(r.counts.in_flight, 0u) << "a run must end with nothing in flight";
  EXPECT_EQ(r.counts.completed + r.counts.dropped, r.counts.arrived);
  for (const auto& record : r.in_order) {
    // Only requests that can never fit an instance's KV (whole blocks under vLLM's
    // scheduler), are over max_model_len (rejected) or outlive their timeout are dropped.
    const std::uint64_t length = std::uint64_t{record.prompt_tokens} + record.output_tokens;
    std::uint64_t capacity = *c.config.kv_capacity_tokens;
    if (c.config.scheduler == BatchScheduler::kVllm) capacity -= capacity % c.config.vllm.block_size;
    const bool over_context = c.config.max_model_len && length > *c.config.max_model_len;
    using metrics::DropReason;
    EXPECT_EQ(record.dropped_for == DropReason::kOverContext, over_context) << "request " << record.id;
    EXPECT_EQ(record.dropped_for == DropReason::kOverKvCapacity, !over_context && length > capacity)
        << "request " << record.id;
    if (record.dropped_for == DropReason::kTimedOut) {
      // Aborted at its client's timeout: only under one, and only what could have run.
      EXPECT_TRUE(c.config.request_timeout.has_value()) << "request " << record.id;
      EXPECT_EQ(record.status, metrics::RequestStatus::kDropped) << "request " << record.id;
      EXPECT_FALSE(over_context || length > capacity) << "request " << record.id;
      continue;
    }
    EXPECT_EQ(record.status, length <= capacity && !over_context ? metrics::RequestStatus::kCompleted
                                                                 : metrics::RequestStatus::kDropped)
        << "request " << record.id;
  }
}

// The first row of requests.csv or timeseries.csv where a folded run differs from the
// unfolded one, reported as a test failure; false then.
bool same_rows(const testing::RunResult& folded, const testing::RunResult& unfolded) {
  EXPECT_EQ(folded.in_order.size(), unfolded.in_order.size());
  EXPECT_EQ(folded.rows.size(), unfolded.rows.size());
  if (folded.in_order.size() != unfolded.in_order.size() || folded.rows.size() != unfolded.rows.size()) return false;
  for (std::size_t k = 0; k < folded.in_order.size(); ++k) {
    if (folded.in_order[k] == unfolded.in_order[k]) continue;
    ADD_FAILURE() << "row " << k << " of requests.csv differs, request " << unfolded.in_order[k].id;
    return false;
  }
  for (std::size_t k = 0; k < folded.rows.size(); ++k) {
    if (folded.rows[k] == unfolded.rows[k]) continue;
    ADD_FAILURE() << "row " << k << " of timeseries.csv differs";
    return false;
  }
  return true;
}

// Folding must save most events in the typical case: the median case at least halves its
// events (a sum over cases would be ruled by the few whose tiny token budgets leave
// nothing to fold).
TEST(LlmClusterPropertyTest, FoldedRunsEqualUnfoldedRunsAndEveryRequestEnds) {
  RngChoice choice{engine::Rng(20261122)};
  const int cases = testing::case_count(400);
  std::vector<double> ratios;
  for (int i = 0; i < cases; ++i) {
    const auto c = draw_serving_case(choice);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.description);
    const auto unfolded = run_case(c, false);
    const auto folded = run_case(c, true);
    expect_everything_accounted(c, unfolded);
    if (!same_rows(folded, unfolded)) return;
    ratios.push_back(static_cast<double>(folded.events) / static_cast<double>(std::max<std::uint64_t>(1, unfolded.events)));
  }
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  EXPECT_LT(ratios[ratios.size() / 2], 0.5) << "folding should save most decode events";
}

// The same on the real traces, whose arrivals and sizes no generator imitates exactly:
// random deployments replaying the first requests of each trace, rate-scaled into overload.
TEST(LlmClusterPropertyTest, FoldedRunsEqualUnfoldedRunsOnRealTraces) {
  const std::pair<const char*, traces::TraceFormat> kTraces[] = {
      {"traces/azure2023_conv.csv", traces::TraceFormat::kAzureCsv},
      {"traces/mooncake_fast25_conversation.jsonl", traces::TraceFormat::kMooncakeJsonl}};
  RngChoice choice{engine::Rng(7)};
  for (const auto& [name, format] : kTraces) {
    const std::string path = meshsim::testing::shared_path(name);
    MESHSIM_NEED_SHARED_FILE(path);
    for (int i = 0; i < testing::case_count(4); ++i) {
      const auto c = draw_serving_case(choice, 1);
      SCOPED_TRACE(std::string(name) + ", case " + std::to_string(i) + ": " + c.description);
      traces::WorkloadSpec workload;
      workload.source = traces::TraceFileSpec{path, format, {}};
      workload.max_requests = 3000;
      workload.rate_scale = 4.0;
      std::map<bool, testing::RunResult> results;
      for (const bool fold : {true, false}) {
        auto source = traces::open_workload(workload, 1);
        ASSERT_TRUE(source) << source.error().message;
        auto config = c.config;
        config.fold_decode = fold;
        replay::ReplayOptions options;
        options.timeseries_interval = c.timeseries_interval;
        results[fold] = testing::run(config, **source, options);
      }
      EXPECT_EQ(results[false].counts.in_flight, 0u);
      EXPECT_TRUE(testing::same_outputs(results[true], results[false]));
    }
  }
}

// The same while instances come and go: random scale-ups and scale-downs (with drain
// timeouts that evacuate instances mid-batch) change nothing a folded run reports, and
// lose no request.
TEST(LlmClusterPropertyTest, FoldedRunsEqualUnfoldedRunsWhileInstancesComeAndGo) {
  RngChoice choice{engine::Rng(4242)};
  // 1,500 by default: case 1,266 caught migrations made inside an iteration end reaching
  // instances that had already formed their batch at that microsecond.
  const int cases = testing::case_count(1500);
  std::uint64_t migrations = 0, evacuations = 0, blocked = 0, removed = 0;
  for (int i = 0; i < cases; ++i) {
    auto c = draw_serving_case(choice);
    testing::draw_scaling(choice, c);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.description);
    const auto unfolded = run_case(c, false);
    const auto folded = run_case(c, true);
    expect_everything_accounted(c, unfolded);
    if (!same_rows(folded, unfolded)) return;
    ASSERT_EQ(folded.log, unfolded.log);
    for (const auto& record : unfolded.in_order) migrations += record.migrations;
    evacuations += unfolded.scaling.evacuations;
    blocked += unfolded.scaling.blocked;
    removed += unfolded.scaling.instances_removed;
  }
  // The cases reach what they are meant to exercise.
  EXPECT_GT(migrations, 0u);
  EXPECT_GT(evacuations, 0u);
  EXPECT_GT(blocked, 0u);
  EXPECT_GT(removed, 0u);
}

}  // namespace
}  // namespace meshsim::cluster

namespace meshsim::cluster {
namespace {

// The requests waiting for their first token, as LlmCluster answers from its recent
// submissions, equal what a visit of every request in flight finds (cutoffs from before
// the run to past now).
void expect_backlog_as_slow_twin(const ServingSystem& serving, SimTime now, RngChoice& choice) {
  for (int k = 0; k < 3; ++k) {
    const SimTime cutoff = now - SimTime::from_us(static_cast<std::int64_t>(choice.pick(20'000'000))) +
                           SimTime::from_us(k == 0 ? 1'000'000 : 0);
    const auto fast = serving.awaiting_first_token(cutoff);
    const auto slow = serving.ServingSystem::awaiting_first_token(cutoff);
    ASSERT_EQ(fast.arrived_before, slow.arrived_before) << "cutoff " << cutoff.seconds() << " s";
    ASSERT_EQ(fast.recent, slow.recent) << "cutoff " << cutoff.seconds() << " s";
  }
}

// A replay driven in steps (start, advance_until, finish: how an RL environment drives it)
// reports exactly what one run() reports, with or without an `until`; on the way, the
// first-token backlog agrees with its slow twin.
TEST(LlmClusterPropertyTest, AReplayDrivenInStepsReportsWhatOneRunReports) {
  RngChoice choice{engine::Rng(99)};
  for (int i = 0; i < testing::case_count(40); ++i) {
    const auto c = draw_serving_case(choice);
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.description);
    replay::ReplayOptions options;
    options.timeseries_interval = c.timeseries_interval;
    if (i % 2 == 1) options.until = SimTime::from_seconds(5);
    traces::ListSource whole_source(c.requests, c.prefixes);
    const auto whole = testing::run(c.config, whole_source, options);

    engine::Simulation sim(1);
    testing::Collector collector;
    traces::ListSource source(c.requests, c.prefixes);
    replay::Replay replay(sim, source, llm_cluster_factory(c.config), options, collector);
    replay.start();
    SimTime t;
    while (!replay.done()) {
      t += SimTime::from_us(static_cast<std::int64_t>(1 + choice.pick(400'000)));
      ASSERT_TRUE(replay.advance_until(t));
      ASSERT_LE(replay.now(), t);
      expect_backlog_as_slow_twin(replay.serving(), t, choice);
    }
    ASSERT_TRUE(replay.finish());
    EXPECT_TRUE(collector.result.in_order == whole.in_order);
    EXPECT_TRUE(collector.result.rows == whole.rows);
  }
}

}  // namespace
}  // namespace meshsim::cluster
