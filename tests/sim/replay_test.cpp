#include "sim/replay/replay.hpp"

#include "sim/cluster/fixed_latency_cluster.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "traces/csv_trace_reader.hpp"
#include "traces/list_source.hpp"

namespace meshsim::replay {
namespace {

using metrics::RequestRecord;
using metrics::RequestStatus;

class Collector final : public ReplayObserver {
 public:
  void on_request(const RequestRecord& record) override { records.push_back(record); }
  void on_interval(const metrics::TimeseriesRow& row) override { rows.push_back(row); }
  void on_warning(const std::string& message) override { warnings.push_back(message); }
  std::vector<RequestRecord> records;
  std::vector<std::string> warnings;
  std::vector<metrics::TimeseriesRow> rows;
};

// A generic CSV trace with columns t (seconds), p and o (prompt and output tokens).
std::unique_ptr<traces::RequestSource> csv_source(const std::string& text, const std::string& name) {
  traces::ColumnMapping mapping{"t", traces::TimeFormat::kSeconds, "p", "o", std::nullopt, std::nullopt, {}};
  return std::make_unique<traces::CsvTraceReader>(std::make_unique<std::istringstream>(text), name, text.size(),
                                                  mapping);
}

// A trace of (seconds, prompt, output) rows in the generic CSV format.
std::unique_ptr<traces::RequestSource> trace(const std::vector<std::tuple<double, int, int>>& rows) {
  std::string text = "t,p,o\n";
  for (const auto& [t, p, o] : rows) text += std::to_string(t) + "," + std::to_string(p) + "," + std::to_string(o) + "\n";
  return csv_source(text, "test.csv");
}

ServingFactory fixed(cluster::FixedLatencyConfig config) {
  return [config](engine::Simulation& sim, cluster::RequestSink& sink) {
    return std::make_unique<cluster::FixedLatencyCluster>(sim, config, sink);
  };
}

cluster::FixedLatencyConfig one_slot() {
  cluster::FixedLatencyConfig config;
  config.instances = 1;
  config.max_batch = 1;
  config.prefill_base = SimTime::from_ms(10);
  config.prefill_us_per_token = 1000.0;  // 1 ms a prompt token
  config.time_per_output_token = SimTime::from_ms(50);
  return config;
}

TEST(ReplayTest, LatenciesFollowTheServingModelAndQueueingIsMeasured) {
  engine::Simulation sim(1);
  auto source = trace({{0.0, 100, 3}, {0.0, 10, 1}});
  Collector collector;
  Replay replay(sim, *source, fixed(one_slot()), ReplayOptions{}, collector);
  auto result = replay.run();
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(collector.records.size(), 2u);
  const RequestRecord& first = collector.records[0];
  EXPECT_EQ(first.id, 0u);
  EXPECT_EQ(*first.ttft(), SimTime::from_ms(110));     // 10 + 100 * 1
  EXPECT_EQ(*first.e2e(), SimTime::from_ms(210));      // + 2 * 50
  EXPECT_EQ(first.tbt_mean(metrics::TbtDefinition::kMeanGap), SimTime::from_ms(50));
  // SplitwiseSim's definition divides the same 100 ms by 3 output tokens.
  EXPECT_EQ(first.tbt_mean(metrics::TbtDefinition::kSplitwiseSim), SimTime::from_us(33'333));
  const RequestRecord& second = collector.records[1];
  EXPECT_EQ(*second.queueing(), SimTime::from_ms(210));  // waited for the only slot
  EXPECT_EQ(*second.ttft(), SimTime::from_ms(230));
  EXPECT_EQ(second.tbt_mean(metrics::TbtDefinition::kMeanGap), SimTime::zero());  // one output token: no gaps
  EXPECT_EQ(result->end_time, SimTime::from_ms(230));
  const auto& counts = replay.metrics().counts();
  EXPECT_EQ(counts.arrived, 2u);
  EXPECT_EQ(counts.completed, 2u);
}

// Issue 8: --rate-scale 1e-6 stretched a trace over years and wrote ~25 GB of rows. The
// interval doubles instead, with a warning, and rows stay under twice the budget.
TEST(ReplayTest, TheTimeSeriesStaysWithinItsRowBudgetHoweverLongTheRun) {
  engine::Simulation sim(1);
  auto source = trace({{0.0, 10, 1}, {5000.0, 10, 1}, {100'000.0, 10, 1}});
  Collector collector;
  ReplayOptions options;
  options.timeseries_interval = SimTime::from_seconds(1);
  options.timeseries_row_budget = 64;
  Replay replay(sim, *source, fixed(one_slot()), options, collector);
  ASSERT_TRUE(replay.run());
  EXPECT_LE(collector.rows.size(), 2 * 64u + 64u);
  ASSERT_EQ(collector.warnings.size(), 1u);
  EXPECT_EQ(collector.warnings.front(),
            "the time series reached 64 rows: its interval is now 2 s, and doubles again as rows approach 128");
  // Rows still tile the run and count every arrival.
  std::uint64_t arrivals = 0;
  for (std::size_t i = 0; i < collector.rows.size(); ++i) {
    arrivals += collector.rows[i].arrivals;
    if (i > 0) {
      EXPECT_EQ(collector.rows[i].start, collector.rows[i - 1].end);
    }
  }
  EXPECT_EQ(arrivals, 3u);
  EXPECT_GE(collector.rows.back().end, SimTime::from_seconds(100'000));
}

TEST(ReplayTest, FullQueuesDropRequestsAndCountThem) {
  engine::Simulation sim(1);
  auto config = one_slot();
  config.max_queue = 0;
  auto source = trace({{0.0, 10, 1}, {0.0, 10, 1}, {1.0, 10, 1}});
  Collector collector;
  Replay replay(sim, *source, fixed(config), ReplayOptions{}, collector);
  ASSERT_TRUE(replay.run());
  const auto& counts = replay.metrics().counts();
  EXPECT_EQ(counts.arrived, 3u);
  EXPECT_EQ(counts.completed, 2u);
  EXPECT_EQ(counts.dropped, 1u);
  // The drop is reported when it happens, at arrival, before the first request completes.
  EXPECT_EQ(collector.records[0].status, RequestStatus::kDropped);
  EXPECT_EQ(collector.records[0].id, 1u);
}

TEST(ReplayTest, StoppingEarlyReportsRequestsInFlightWithoutLosingAny) {
  engine::Simulation sim(1);
  auto source = trace({{0.0, 10, 100}, {0.0, 10, 100}, {0.1, 10, 1}, {50.0, 10, 1}});
  Collector collector;
  ReplayOptions options;
  options.until = SimTime::from_seconds(1);
  Replay replay(sim, *source, fixed(one_slot()), options, collector);
  auto result = replay.run();
  ASSERT_TRUE(result);
  const auto& counts = replay.metrics().counts();
  EXPECT_EQ(counts.arrived, 3u);  // the request at 50 s had not arrived
  EXPECT_EQ(counts.completed, 0u);
  EXPECT_EQ(counts.in_flight, 3u);
  ASSERT_EQ(collector.records.size(), 3u);
  // The running request had its first token; the queued ones had not started.
  EXPECT_TRUE(collector.records[0].first_token.has_value());
  EXPECT_FALSE(collector.records[0].finished.has_value());
  EXPECT_FALSE(collector.records[1].started.has_value());
  EXPECT_EQ(collector.records[2].status, RequestStatus::kInFlight);
  EXPECT_EQ(result->end_time, SimTime::from_seconds(1));
}

TEST(ReplayTest, TimeseriesRowsCoverTheRunAndAddUp) {
  engine::Simulation sim(1);
  std::vector<std::tuple<double, int, int>> rows;
  for (int i = 0; i < 50; ++i) rows.emplace_back(i * 0.5, 10, 5);
  auto source = trace(rows);
  Collector collector;
  ReplayOptions options;
  options.timeseries_interval = SimTime::from_seconds(2);
  cluster::FixedLatencyConfig config = one_slot();
  config.max_batch = 4;
  Replay replay(sim, *source, fixed(config), options, collector);
  auto result = replay.run();
  ASSERT_TRUE(result);
  std::uint64_t arrivals = 0;
  std::uint64_t completions = 0;
  SimTime previous_end = SimTime::zero();
  for (const auto& row : collector.rows) {
    EXPECT_EQ(row.start, previous_end);
    previous_end = row.end;
    arrivals += row.arrivals;
    completions += row.completions;
    EXPECT_GE(row.roofline_utilisation, 0.0);
    EXPECT_LE(row.roofline_utilisation, 1.0);
    EXPECT_GE(row.busy_share, row.roofline_utilisation);  // work is only done while busy
    EXPECT_LE(row.busy_share, 1.0);
  }
  EXPECT_EQ(previous_end, result->end_time);
  EXPECT_EQ(arrivals, 50u);
  EXPECT_EQ(completions, 50u);
}

TEST(ReplayTest, RoundRobinAndFewestRequestsSpreadRequests) {
  for (const auto routing : {cluster::RoutePolicy::kRoundRobin, cluster::RoutePolicy::kFewestRequests}) {
    engine::Simulation sim(1);
    auto source = trace({{0.0, 10, 10}, {0.0, 10, 10}, {0.0, 10, 10}, {0.0, 10, 10}});
    auto config = one_slot();
    config.instances = 2;
    config.routing = routing;
    Collector collector;
    Replay replay(sim, *source, fixed(config), ReplayOptions{}, collector);
    ASSERT_TRUE(replay.run());
    int on_first = 0;
    for (const auto& r : collector.records) on_first += *r.instance == 0;
    EXPECT_EQ(on_first, 2) << cluster::kRoutePolicyNames.name(routing);
  }
}

TEST(ReplayTest, ASourceErrorEndsTheRunWithThatError) {
  engine::Simulation sim(1);
  const auto source = csv_source("t,p,o\n0,1,1\n1,x,1\n", "bad.csv");
  Collector collector;
  Replay replay(sim, *source, fixed(one_slot()), ReplayOptions{}, collector);
  auto result = replay.run();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message.rfind("bad.csv:3: column 'p'", 0), 0u);
}

// Driven in steps (an RL episode), a source that fails stops the run and every later step
// says so: acting on after it once scheduled events in a finished simulation.
TEST(ReplayTest, ASourceErrorMidRunIsReturnedByEveryLaterStep) {
  engine::Simulation sim(1);
  const auto source = csv_source("t,p,o\n0,1,1\n1,2,1\n5,x,1\n", "bad.csv");
  Collector collector;
  ReplayOptions options;
  options.stop_when_served = false;
  options.until = SimTime::from_seconds(60);
  Replay replay(sim, *source, fixed(one_slot()), options, collector);
  replay.start();
  ASSERT_TRUE(replay.advance_until(SimTime::from_ms(500)));
  for (const double t : {2.0, 3.0, 30.0}) {
    const Status step = replay.advance_until(SimTime::from_seconds(t));
    ASSERT_FALSE(step) << t;
    EXPECT_EQ(step.error().message.rfind("bad.csv:4: column 'p'", 0), 0u) << step.error().message;
  }
  EXPECT_EQ(sim.state(), engine::RunState::kFinished);
  EXPECT_FALSE(replay.finish());
}

// A source with no request at all, in a run that stops when served, ends at once (its
// sampling timer once ticked on, doubling its interval, to the clock's limit).
TEST(ReplayTest, ASourceWithNoRequestEndsAtOnce) {
  engine::Simulation sim(1);
  traces::ListSource source({});
  Collector collector;
  Replay replay(sim, source, fixed(one_slot()), ReplayOptions{}, collector);
  const auto result = replay.run();
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->end_time, SimTime::zero());
  EXPECT_EQ(replay.metrics().counts().arrived, 0u);
  EXPECT_LE(sim.events_processed(), 1u);
}

}  // namespace
}  // namespace meshsim::replay
