// RunMetrics: what SLO attainment judges, a TTFT target that scales with prompt length,
// and goodput beside the load offered.
#include "sim/metrics/run_metrics.hpp"

#include <gtest/gtest.h>

namespace meshsim::metrics {
namespace {

RequestRecord completed(std::uint32_t prompt, double ttft_s, double tbt_s, double at_s) {
  RequestRecord r;
  r.arrival = SimTime::from_seconds(at_s);
  r.prompt_tokens = prompt;
  r.output_tokens = 11;
  r.status = RequestStatus::kCompleted;
  r.started = r.arrival;
  r.first_token = r.arrival + SimTime::from_seconds(ttft_s);
  r.finished = *r.first_token + SimTime::from_seconds(10 * tbt_s);
  return r;
}

TEST(RunMetricsTest, TheTtftTargetGrowsWithThePromptByItsAllowancePerToken) {
  SloTargets slo;
  slo.ttft = SimTime::from_ms(200);
  slo.ttft_per_prompt_token_s = 1e-4;  // 0.1 ms a token
  EXPECT_EQ(slo.ttft_for(0), SimTime::from_ms(200));
  EXPECT_EQ(slo.ttft_for(8000), SimTime::from_ms(1000));
  EXPECT_TRUE(judge(completed(8000, 0.9, 0.05, 0), slo).met());
  EXPECT_FALSE(judge(completed(1000, 0.9, 0.05, 0), slo).met()) << "0.3 s allowed for a 1000-token prompt";
  slo.ttft_per_prompt_token_s = 0;
  EXPECT_FALSE(judge(completed(8000, 0.9, 0.05, 0), slo).met()) << "an absolute target";
}

TEST(RunMetricsTest, RequestsRefusedForTheirLengthAreNotJudgedAndGoodputCountsTheMet) {
  RunMetrics m(SloTargets{});
  for (int i = 0; i < 4; ++i) m.on_arrival(SimTime::from_seconds(i + 1));
  m.on_finished(completed(100, 0.1, 0.01, 1));  // met
  m.on_finished(completed(100, 5.0, 0.01, 2));  // TTFT missed
  RequestRecord refused;
  refused.status = RequestStatus::kDropped;
  refused.dropped_for = DropReason::kOverContext;
  m.on_finished(refused);
  RequestRecord timed_out = refused;
  timed_out.dropped_for = DropReason::kTimedOut;
  m.on_finished(timed_out);
  EXPECT_EQ(m.counts().judged(), 3u) << "completed 2 + dropped 2 - refused for length 1";
  EXPECT_DOUBLE_EQ(m.slo_attainment(), 1.0 / 3.0);
  EXPECT_EQ(m.counts().dropped_by(DropReason::kOverContext), 1u);
  EXPECT_EQ(m.counts().dropped_by(DropReason::kTimedOut), 1u);
  EXPECT_DOUBLE_EQ(m.offered_per_s(), 1.0) << "4 arrivals up to the last, at 4 s";
  EXPECT_EQ(m.slo_met(), 1u);
}

}  // namespace
}  // namespace meshsim::metrics
