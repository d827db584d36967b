// The right-sizing bound end to end (rl/env/bound_plays.hpp): on a workload whose need is
// known by construction (constant-rate steps of constant-length requests), the measured
// capacity, the schedule and its play are the hand-computed ones.
#include "rl/env/bound_plays.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/rl/env_fixture.hpp"
#include "tools/cli/capacity_command.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::rl {
namespace {

// 2 requests/s for 600 s, 6/s for 600 s, 2/s for 600 s, evenly spaced, 500 prompt and
// 100 output tokens each.
Fixture step_fixture() {
  Fixture f = make_fixture(1800);
  traces::GeneratorSpec g;
  g.arrivals.kind = traces::ArrivalSpec::Kind::kConstant;
  for (const double rate : {2.0, 6.0, 2.0}) g.stages.push_back({rate, SimTime::from_seconds(600)});
  g.prompt_tokens.value = 500;  // LengthSpec's default kind is fixed
  g.output_tokens.value = 100;
  f.config.workload = traces::WorkloadSpec{};
  f.config.workload.source = g;
  auto source = traces::open_workload(f.config.workload, f.config.seed);
  f.requests = *traces::load_trace(**source);
  f.workload = traces::in_memory(f.requests);
  return f;
}

TEST(BoundPlaysTest, ARateStepIsScheduledOneDelayAheadAndPlayedAsScheduled) {
  const Fixture f = step_fixture();
  const EvalWindow window{"steps", 0, 1785, 1};  // the warm-up's 15 s and 119 decisions
  const std::vector<double> rates = interval_rates(*f.config.rl, *f.workload, window);
  ASSERT_EQ(rates.size(), 119u);
  // Interval t covers [15 + 15 t, 30 + 15 t) s: the 6/s stage is intervals 39..78.
  for (std::size_t t = 0; t < rates.size(); ++t) {
    const double expected = t >= 39 && t < 79 ? 6.0 : 2.0;
    EXPECT_NEAR(rates[t], expected, 1.0 / 15 + 1e-9) << "interval " << t;
  }

  engine::ThreadPool pool(2);
  const MeasuredCapacity capacity = measure_capacity(f.config, catalog(), f.workload, window, pool);
  ASSERT_EQ(capacity.error, "");
  ASSERT_EQ(capacity.curves.size(), 3u);  // 1800 s played in stretches of 600
  EXPECT_EQ(capacity.below_target, 0u);
  for (const CapacityCurve& curve : capacity.curves) {
    ASSERT_EQ(curve.sizes, (std::vector<std::uint32_t>{1, 2, 4, 8}));
    EXPECT_GT(curve.at(1), 2.0) << "one instance serves more than the first stage";
    for (std::size_t i = 1; i < curve.sizes.size(); ++i) EXPECT_GT(curve.sustained[i], curve.sustained[i - 1]);
    // The same requests at another rate: each stretch's capacity is the same to the
    // search's precision.
    EXPECT_NEAR(curve.at(1), capacity.curves[0].at(1), 0.06 * capacity.curves[0].at(1));
  }
  EXPECT_GT(capacity.drain_s, 0.0);
  EXPECT_LT(capacity.drain_s, 60.0);

  // At a utilisation where one instance takes 2.2 requests/s, the need is 1, then the
  // fewest covering 6/s, then 1; with a 60 s delay (4 intervals) the more are asked for 4
  // intervals ahead, and drained the moment the load falls.
  const double slowest = std::min({capacity.curves[0].at(1), capacity.curves[1].at(1), capacity.curves[2].at(1)});
  const double utilisation = 2.2 / slowest;
  const std::uint32_t peak = fewest_sustaining(capacity.curves[1], 6.0 + 1.0 / 15, utilisation, 1, 32);
  ASSERT_GE(peak, 2u);
  ASSERT_LE(peak, 3u);
  const auto held = bound_schedule(f.config, rates, capacity, utilisation, BoundForm::kHindsight, 60, 1);
  std::vector<std::uint32_t> expected(119, 1);
  std::fill(expected.begin() + 35, expected.begin() + 79, peak);
  EXPECT_EQ(held, expected);
  // Smoothed over a minute, the step's edges are averaged but the plateaus stay.
  const auto smoothed = bound_schedule(f.config, rates, capacity, utilisation, BoundForm::kSmoothed, 60, 1);
  for (std::size_t t = 0; t < 119; ++t) {
    if (t < 30 || (t >= 40 && t < 75) || t >= 85) {
      EXPECT_EQ(smoothed[t], expected[t]) << "interval " << t;
    }
  }

  const Outcome o = play_schedule("bound_hindsight", utilisation, f.config, catalog(), f.workload, window, 60, 1, 1, held);
  ASSERT_EQ(o.error, "");
  ASSERT_EQ(o.instances.size(), held.size());
  for (std::size_t t = 0; t < held.size(); ++t) {
    // A drained instance exists until its requests finish: the interval it drains in
    // counts it for a while.
    if (t == 79) {
      EXPECT_GE(o.instances[t], 1.0);
      EXPECT_LT(o.instances[t], peak);
    } else {
      EXPECT_NEAR(o.instances[t], held[t], 1e-9) << "interval " << t;
    }
  }
  EXPECT_EQ(o.scale_ups, peak - 1);
  EXPECT_EQ(o.scale_downs, peak - 1);
  EXPECT_GT(o.slo_attainment, 0.99);
}

// `meshsim capacity --find rate` and the bound ask one search over one probe: on the same
// stretch, at the same warm-up, precision and pool size, they find the same capacity to
// the precision (the bound starts each search from its neighbour's answer, the command
// from the scenario's rate), and the command's own replay at the bound's answer meets.
TEST(BoundPlaysTest, TheBoundsCapacityIsWhatMeshsimCapacityFindsOnTheSameStretch) {
  const Fixture f = step_fixture();
  const EvalWindow window{"steps", 0, 1785, 1};
  engine::ThreadPool pool(2);
  const MeasuredCapacity capacity = measure_capacity(f.config, catalog(), f.workload, window, pool);
  ASSERT_EQ(capacity.error, "");
  const std::string dir = (std::filesystem::temp_directory_path() / "meshsim_bound_capacity").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // The step workload's second stretch, [600, 1200) s, as a scenario of its own.
  configs::ScenarioConfig stretch = f.config;
  stretch.workload.window_start = SimTime::from_seconds(600);
  stretch.workload.window_end = SimTime::from_seconds(1200);
  stretch.rl.reset();
  stretch.replay.until.reset();
  std::ofstream(dir + "/stretch.json") << configs::to_json(stretch).dump(2);
  // capacity.csv's rows as (rate_scale, meets_target, arrived).
  const auto probes = [](const std::string& folder) {
    std::vector<std::tuple<double, bool, double>> rows;
    std::ifstream csv(folder + "/capacity.csv");
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      std::vector<std::string> cells;
      std::stringstream row(line);
      for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
      rows.emplace_back(std::stod(cells.at(1)), cells.at(3) == "1", std::stod(cells.at(8)));
    }
    return rows;
  };
  for (const std::uint32_t n : {1u, 4u}) {
    cli::CapacityCommandOptions options;
    options.config_path = dir + "/stretch.json";
    options.sets = {"serving.start_state.0.count=" + std::to_string(n)};
    options.find = "rate";
    options.rate_scale = 1.0;
    options.precision = 0.05;
    options.warmup_s = 60;
    options.threads = 1;
    options.plot = false;
    options.out_dir = dir + "/n" + std::to_string(n);
    std::ostringstream out, err;
    ASSERT_EQ(cli::run_capacity_command(options, out, err), cli::kExitOk) << err.str();
    double best = 0, requests = 0;
    for (const auto& [rate, meets, arrived] : probes(options.out_dir)) {
      if (meets && rate > best) best = rate;
      requests = arrived;
    }
    ASSERT_GT(best, 0) << out.str();
    const double bound_rate = capacity.curves[1].at(n) * 600.0 / requests;
    EXPECT_NEAR(std::log(bound_rate / best), 0.0, std::log(1.05)) << n << " instances";
    // The command's replay of n instances at the bound's answer meets the target.
    options.find = "instances";
    options.sets.clear();
    options.max_instances = n;
    options.rate_scale = bound_rate;
    options.out_dir = dir + "/at" + std::to_string(n);
    ASSERT_EQ(cli::run_capacity_command(options, out, err), cli::kExitOk) << err.str();
    EXPECT_NE(out.str().find("capacity    " + std::to_string(n) + " mixed instance"), std::string::npos) << out.str();
  }
}

TEST(BoundPlaysTest, ABoundOfSeveralPoolsIsRefusedNotPlayedWrong) {
  Fixture f = make_fixture(300);
  auto& serving = std::get<configs::LlmServingSpec>(f.config.serving);
  ASSERT_FALSE(serving.start_state.empty());
  auto prompt = serving.start_state.front();
  prompt.tag = cluster::InstanceTag::kPrompt;
  auto token = prompt;
  token.tag = cluster::InstanceTag::kToken;
  serving.start_state = {prompt, token};
  const Outcome o = play_schedule("bound_hindsight", 1.0, f.config, catalog(), f.workload, {"w", 0, 300, 1}, 10, 1, 1,
                                  std::vector<std::uint32_t>(20, 2));
  EXPECT_NE(o.error, "");
}

}  // namespace
}  // namespace meshsim::rl
