#include "sim/metrics/overload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace meshsim::metrics {
namespace {

using engine::SimTime;

// Rows of `seconds` each: arrivals and departures per row; the backlog follows from them,
// all of it waiting beyond `running` requests.
OverloadVerdict judge(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& rows, double seconds = 10,
                      std::uint64_t running = 1000) {
  OverloadWatch watch;
  std::uint64_t backlog = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    TimeseriesRow row;
    row.start = SimTime::from_seconds(seconds * static_cast<double>(i));
    row.end = SimTime::from_seconds(seconds * static_cast<double>(i + 1));
    row.arrivals = rows[i].first;
    row.completions = rows[i].second;
    backlog += rows[i].first - rows[i].second;
    row.running = std::min(backlog, running);
    row.queued = backlog - row.running;
    watch.add(row);
  }
  return watch.verdict();
}

TEST(OverloadWatchTest, AGrowingBacklogInTheSecondHalfOfTheArrivalsIsOverload) {
  const auto v = judge({{100, 100}, {100, 100}, {100, 60}, {100, 60}});
  EXPECT_TRUE(v.overloaded);
  EXPECT_EQ(v.from_s, 20.0);
  EXPECT_EQ(v.to_s, 40.0);
  EXPECT_DOUBLE_EQ(v.arrival_rate, 10.0);
  EXPECT_DOUBLE_EQ(v.departure_rate, 6.0);
  EXPECT_EQ(v.backlog_before, 0u);
  EXPECT_EQ(v.backlog_after, 80u);
}

TEST(OverloadWatchTest, KeepingUpOrAWarmUpBacklogIsNot) {
  EXPECT_FALSE(judge({{100, 100}, {100, 100}, {100, 95}, {100, 100}}).overloaded);
  // A backlog built in the first half and drained in the second.
  EXPECT_FALSE(judge({{100, 20}, {100, 20}, {100, 180}, {100, 180}}).overloaded);
  // Many requests in service but none waiting is a busy deployment, not an overloaded one.
  EXPECT_FALSE(judge({{100, 20}, {100, 20}, {100, 100}, {100, 100}}).overloaded);
  // Too few arrivals to say.
  EXPECT_FALSE(judge({{10, 10}, {10, 10}, {10, 0}, {10, 0}}).overloaded);
  EXPECT_FALSE(OverloadWatch().verdict().overloaded);
}

TEST(OverloadWatchTest, AQueueBuiltEarlyAndNeverWorkedOffIsOverload) {
  // The second half keeps pace, but 160 requests still wait for admission at its end.
  const auto v = judge({{100, 20}, {100, 20}, {100, 100}, {100, 100}}, 10, /*running=*/0);
  EXPECT_TRUE(v.overloaded);
  EXPECT_EQ(v.waiting_after, 160u);
  EXPECT_DOUBLE_EQ(v.departure_rate, v.arrival_rate);
}

TEST(OverloadWatchTest, DrainingAfterTheLastArrivalDoesNotHideIt) {
  // Arrivals stop after 40 s; the backlog then drains for 80 s.
  const auto v = judge({{100, 50}, {100, 50}, {100, 50}, {100, 50}, {0, 50}, {0, 50}, {0, 50}, {0, 50}});
  EXPECT_TRUE(v.overloaded);
  EXPECT_EQ(v.to_s, 40.0);
}

}  // namespace
}  // namespace meshsim::metrics
