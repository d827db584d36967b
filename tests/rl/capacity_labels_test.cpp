// The capacity model's data (rl/env/capacity_labels.hpp): stretches drawn from spans on
// the grid, their work figures exact, and their measured capacity moving with the work.
#include "rl/env/capacity_labels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "tests/rl/env_fixture.hpp"

namespace meshsim::rl {
namespace {

traces::TraceRequest request(double at_s, std::uint32_t prompt, std::uint32_t output) {
  traces::TraceRequest r;
  r.arrival = SimTime::from_seconds(at_s);
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

TEST(CapacityLabelsTest, WorkFiguresAreTheRequestsOwn) {
  std::vector<traces::TraceRequest> burst;
  for (std::uint32_t i = 1; i <= 10; ++i) burst.push_back(request(0.05 * i, 100 * i, 10 * i));
  const autoscale::WorkFigures f = work_figures(burst, 10);
  EXPECT_DOUBLE_EQ(f.prompt_mean, 550);
  EXPECT_DOUBLE_EQ(f.prompt_p90, 900);  // nearest rank: the 9th of 10
  EXPECT_DOUBLE_EQ(f.output_mean, 55);
  EXPECT_DOUBLE_EQ(f.output_p90, 90);
  EXPECT_DOUBLE_EQ(f.burstiness, 9);  // counts 10, 0 x 9: variance 9 over mean 1
  std::vector<traces::TraceRequest> even;
  for (int i = 0; i < 30; ++i) even.push_back(request(i / 3.0, 100, 10));
  EXPECT_DOUBLE_EQ(work_figures(even, 10).burstiness, 0);
  EXPECT_EQ(work_figures({}, 10).prompt_mean, 0);
}

// On random spans: every start is on the grid, its stretch inside a span, none twice;
// as many as asked (all when fewer fit); the same seed draws the same.
TEST(CapacityLabelsTest, StretchesAreDrawnOnTheGridInsideTheSpans) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> at(0, 20'000), length(0, 5'000);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<configs::TimeSpan> spans;
    for (int s = 0; s < 1 + trial % 3; ++s) {
      const double from = at(rng);
      spans.push_back({from, from + length(rng)});
    }
    const double grid = trial % 2 == 0 ? 600 : 450;
    std::set<double> fitting;
    for (const auto& span : spans) {
      for (double k = 0; (k + 1) * grid <= 30'000; ++k) {
        if (k * grid >= span.from_s && (k + 1) * grid <= span.to_s) fitting.insert(k * grid);
      }
    }
    const std::size_t count = trial % 7;
    const auto starts = pick_stretches(spans, grid, count, trial);
    EXPECT_EQ(starts.size(), std::min(count, fitting.size())) << "trial " << trial;
    EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
    EXPECT_EQ(std::set<double>(starts.begin(), starts.end()).size(), starts.size());
    for (const double s : starts) EXPECT_TRUE(fitting.contains(s)) << "trial " << trial << ": " << s;
    EXPECT_EQ(pick_stretches(spans, grid, count, trial), starts);
  }
}

// Four stretches at the same rate and arrivals, short or long prompts and outputs: what
// an instance sustains falls as the work per request grows, and every size is a sample.
TEST(CapacityLabelsTest, MeasuredCapacityFallsAsTheWorkPerRequestGrows) {
  Fixture f = make_fixture(1800);
  auto requests = std::make_shared<std::vector<traces::TraceRequest>>();
  const std::uint32_t prompts[] = {300, 1500, 300, 1500}, outputs[] = {50, 50, 300, 300};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 1800; ++i) requests->push_back(request(600.0 * k + i / 3.0, prompts[k], outputs[k]));
  }
  const traces::SharedWorkload workload = traces::in_memory(requests);
  engine::ThreadPool pool(2);
  const auto labels = label_stretches(f.config, catalog(), workload, {0, 600, 1200, 1800}, 600, pool);
  ASSERT_TRUE(labels) << labels.error().message;
  ASSERT_EQ(labels->size(), 4u);
  for (int k = 0; k < 4; ++k) {
    const CapacityLabel& label = (*labels)[static_cast<std::size_t>(k)];
    EXPECT_EQ(label.capacity.requests, 1800u);
    EXPECT_DOUBLE_EQ(label.work.prompt_mean, prompts[k]);
    EXPECT_DOUBLE_EQ(label.work.output_p90, outputs[k]);
    ASSERT_EQ(label.capacity.curve.sizes, (std::vector<std::uint32_t>{1, 2, 4, 8}));
    for (std::size_t j = 1; j < 4; ++j) {
      EXPECT_GT(label.capacity.curve.sustained[j], label.capacity.curve.sustained[j - 1]) << "stretch " << k;
    }
  }
  const auto one = [&](int k) { return (*labels)[static_cast<std::size_t>(k)].capacity.curve.at(1); };
  EXPECT_GT(one(0), 1.2 * one(1)) << "longer prompts, less capacity";
  EXPECT_GT(one(0), 1.2 * one(2)) << "longer outputs, less capacity";
  EXPECT_GT(one(1), one(3));
  EXPECT_EQ(capacity_samples(*labels, 200).size(), 16u);
  EXPECT_TRUE(capacity_samples(*labels, 2000).empty()) << "no stretch has 2000 requests";
}

}  // namespace
}  // namespace meshsim::rl
