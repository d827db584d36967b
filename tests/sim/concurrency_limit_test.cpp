// workload.max_concurrency (ReplayOptions::max_concurrency): at most N requests in the
// system, a request that arrives while N are there sent when one leaves. Checked on random
// traces and deployments against the rule itself, replayed from the run's own events.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "sim/cluster/fixed_latency_cluster.hpp"
#include "sim/engine/rng.hpp"
#include "sim/replay/replay.hpp"
#include "traces/list_source.hpp"

namespace meshsim::replay {
namespace {

using engine::SimTime;

// Every arrival (+1) and departure (-1) as the replay's clock saw it, in order.
struct Event {
  SimTime at;
  int delta;
  std::uint64_t id;
};
class EventLog final : public ReplayObserver {
 public:
  const Replay* replay = nullptr;
  std::vector<Event> events;
  std::vector<metrics::RequestRecord> records;
  void on_arrival(const traces::TraceRequest& r) override { events.push_back({replay->now(), +1, r.id}); }
  void on_request(const metrics::RequestRecord& r) override {
    records.push_back(r);
    if (r.status != metrics::RequestStatus::kInFlight) events.push_back({replay->now(), -1, r.id});
  }
};

struct Case {
  std::vector<traces::ListSource::Row> rows;
  cluster::FixedLatencyConfig serving;
  std::optional<std::uint32_t> limit;
  std::optional<SimTime> until;
};

Case random_case(std::uint64_t seed) {
  engine::Rng rng(seed);
  Case c;
  const std::size_t n = 1 + rng.uniform_int(60);
  double t = 0;
  // Bursts (many at one time, as a closed loop's first wave) and gaps.
  for (std::size_t i = 0; i < n; ++i) {
    if (rng.uniform() < 0.5) t += rng.uniform() * 2.0;
    c.rows.emplace_back(t, 1 + rng.uniform_int(500), 1 + rng.uniform_int(20));
  }
  c.serving.instances = 1 + static_cast<std::uint32_t>(rng.uniform_int(3));
  c.serving.max_batch = 1 + static_cast<std::uint32_t>(rng.uniform_int(4));
  if (rng.uniform() < 0.4) c.serving.max_queue = static_cast<std::uint32_t>(rng.uniform_int(3));  // drops
  c.serving.prefill_base = SimTime::from_ms(static_cast<std::int64_t>(rng.uniform_int(20)));
  c.serving.time_per_output_token = SimTime::from_ms(static_cast<std::int64_t>(1 + rng.uniform_int(50)));
  c.limit = 1 + static_cast<std::uint32_t>(rng.uniform_int(8));
  if (rng.uniform() < 0.2) c.until = SimTime::from_seconds(rng.uniform() * t);
  return c;
}

struct Outcome {
  EventLog log;
  ReplayResult result;
  metrics::RequestCounts counts;
};

Outcome play(const Case& c) {
  engine::Simulation sim(1);
  traces::ListSource source(c.rows);
  ReplayOptions options;
  options.max_concurrency = c.limit;
  options.until = c.until;
  Outcome out;
  const ServingFactory factory = [&c](engine::Simulation& s, cluster::RequestSink& sink) {
    return std::make_unique<cluster::FixedLatencyCluster>(s, c.serving, sink);
  };
  Replay replay(sim, source, factory, options, out.log);
  out.log.replay = &replay;
  auto result = replay.run();
  EXPECT_TRUE(result) << result.error().message;
  if (result) out.result = *result;
  out.counts = replay.metrics().counts();
  return out;
}

TEST(ConcurrencyLimitTest, RandomRunsKeepTheLimitSendHeldRequestsAtADepartureAndLoseNone) {
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Case c = random_case(seed);
    const Outcome out = play(c);
    const std::uint32_t limit = *c.limit;
    // Nothing lost: what arrived completed, was dropped or is still in the system.
    EXPECT_EQ(out.counts.arrived, out.counts.completed + out.counts.dropped + out.counts.in_flight);
    if (!c.until) {
      EXPECT_EQ(out.counts.arrived, c.rows.size());  // every request was sent in the end
    }
    // Replayed from the run's own events: the limit holds, requests are sent in their
    // order, never before their time, and one sent later than its time went out at the
    // moment a request left a full system.
    std::int64_t in_system = 0;
    std::uint64_t next_id = 0;
    std::map<std::int64_t, int> left_at;  // microsecond -> departures from a full system
    for (const Event& e : out.log.events) {
      if (e.delta < 0) {
        if (in_system == static_cast<std::int64_t>(limit)) ++left_at[e.at.us()];
        --in_system;
        continue;
      }
      ASSERT_EQ(e.id, next_id++) << "requests are sent in their order";
      const SimTime due = SimTime::from_seconds(std::get<0>(c.rows[e.id]));
      ASSERT_GE(e.at, due);
      ASSERT_LT(in_system, static_cast<std::int64_t>(limit)) << "request " << e.id << " sent into a full system";
      if (e.at > due) {
        auto it = left_at.find(e.at.us());
        ASSERT_TRUE(it != left_at.end() && it->second > 0)
            << "request " << e.id << " was held but sent when no request left a full system";
        --it->second;
      }
      ++in_system;
    }
    // A request's recorded arrival is when it was sent, so its latencies start there.
    for (const auto& r : out.log.records) {
      const auto sent = std::find_if(out.log.events.begin(), out.log.events.end(),
                                     [&](const Event& e) { return e.delta > 0 && e.id == r.id; });
      ASSERT_NE(sent, out.log.events.end());
      EXPECT_EQ(r.arrival, sent->at);
    }
  }
}

TEST(ConcurrencyLimitTest, ALimitNoRunReachesChangesNothing) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Case c = random_case(seed);
    c.limit = static_cast<std::uint32_t>(c.rows.size());
    Case unlimited = c;
    unlimited.limit.reset();
    const Outcome limited = play(c), free = play(unlimited);
    EXPECT_EQ(limited.log.records, free.log.records);
    EXPECT_EQ(limited.result.end_time, free.result.end_time);
    EXPECT_EQ(limited.result.events, free.result.events);
  }
}

TEST(ConcurrencyLimitTest, AllAtOnceIsAClosedLoopOfThatManyClients) {
  // 3 clients, 9 requests due at 0, one slot: each request is sent when the one before it
  // left, so request k starts where k - 1 ended.
  Case c;
  for (int i = 0; i < 9; ++i) c.rows.emplace_back(0.0, 10, 5);
  c.serving.instances = 3;
  c.serving.max_batch = 1;
  c.serving.prefill_base = SimTime::from_ms(10);
  c.serving.prefill_us_per_token = 0;
  c.serving.time_per_output_token = SimTime::from_ms(20);
  c.limit = 3;
  const Outcome out = play(c);
  ASSERT_EQ(out.log.records.size(), 9u);
  std::vector<metrics::RequestRecord> by_id = out.log.records;
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (std::size_t k = 0; k < 9; ++k) {
    // 10 ms prefill + 4 more tokens at 20 ms: 90 ms a request, three at a time.
    EXPECT_EQ(by_id[k].arrival, SimTime::from_ms(static_cast<std::int64_t>(90 * (k / 3)))) << k;
    EXPECT_EQ(*by_id[k].e2e(), SimTime::from_ms(90)) << k;
  }
}

}  // namespace
}  // namespace meshsim::replay
