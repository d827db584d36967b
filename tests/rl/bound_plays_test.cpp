// The right-sizing bound end to end (rl/env/bound_plays.hpp): on a workload whose need is
// known by construction (constant-rate steps of constant-length requests), the measured
// capacity, the schedule and its play are the hand-computed ones.
#include "rl/env/bound_plays.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/rl/env_fixture.hpp"
#include "tools/cli/capacity_command.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::rl {
namespace {

// 2 requests/s for 600 s, 6/s for 600 s, 2/s for 600 s, evenly spaced, 500 prompt and
// 100 output tokens each (or the rates and lengths given).
Fixture step_fixture(std::array<double, 3> rates = {2.0, 6.0, 2.0}, double prompt = 500, double output = 100) {
  Fixture f = make_fixture(1800);
  traces::GeneratorSpec g;
  g.arrivals.kind = traces::ArrivalSpec::Kind::kConstant;
  for (const double rate : rates) g.stages.push_back({rate, SimTime::from_seconds(600)});
  g.prompt_tokens.value = prompt;  // LengthSpec's default kind is fixed
  g.output_tokens.value = output;
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
  // One instance misses nothing on every stretch: no size past it is measured.
  ASSERT_EQ(capacity.misses.size(), 3u);
  for (const std::vector<double>& m : capacity.misses) EXPECT_EQ(m.size(), 1u);

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

// A capacity measured by hand: three stretches of 600 s (the step fixture's 119
// decisions of 15 s after a 15 s warm-up fall 39, 40 and 40 in them) and the misses of 1,
// 2, ... instances on each.
MeasuredCapacity hand_capacity() {
  MeasuredCapacity c;
  c.grid_s = 600;
  c.curves.assign(3, CapacityCurve{{1, 2, 4, 8}, {2, 4, 8, 16}});
  c.misses = {{10, 2, 0}, {100, 40, 5, 0}, {10, 0}};
  return c;
}

// The priced form sizes each stretch where its instance-intervals plus the price of its
// misses are least: nothing bought at price 0, everything measured at a price past every
// change, and in between each stretch on its own side of its changes (stretch 1 changes
// size at prices 40/60, 40/35 and 40/5, stretch 0 at 39/8 and 39/2, stretch 2 at 40/10).
TEST(BoundPlaysTest, ThePricedBoundSizesEachStretchWhereItsInstancesAndPricedMissesAreLeast) {
  Fixture f = make_fixture(1800);
  f.config.scaling.manager.min_instances_per_pool = 1;
  f.config.scaling.manager.max_total_instances = 32;
  const MeasuredCapacity c = hand_capacity();
  const std::vector<double> rates(119, 1.0);
  const auto sized = [&](double price) {
    return bound_schedule(f.config, rates, c, price, BoundForm::kPriced, 0, 1);
  };
  const auto stretches = [](std::uint32_t a, std::uint32_t b, std::uint32_t d) {
    std::vector<std::uint32_t> v(39, a);
    v.insert(v.end(), 40, b);
    v.insert(v.end(), 40, d);
    return v;
  };
  EXPECT_EQ(sized(0), stretches(1, 1, 1));
  EXPECT_EQ(sized(1), stretches(1, 2, 1));
  EXPECT_EQ(sized(5), stretches(2, 3, 2));
  EXPECT_EQ(sized(1e9), stretches(3, 4, 2));
  // Never past the scenario's ceiling.
  f.config.scaling.manager.max_total_instances = 3;
  EXPECT_EQ(sized(1e9), stretches(3, 3, 2));

  // The prices swept: 0, then quantiles of those changes, each between its change and
  // the next, rising.
  f.config.scaling.manager.max_total_instances = 32;
  const std::vector<double> prices = miss_prices(f.config, c, 119, 4);
  ASSERT_EQ(prices.size(), 4u);
  EXPECT_EQ(prices[0], 0.0);
  EXPECT_DOUBLE_EQ(prices[1], 0.5 * (40.0 / 35 + 40.0 / 10));
  EXPECT_DOUBLE_EQ(prices[2], 0.5 * (39.0 / 8 + 40.0 / 5));
  EXPECT_DOUBLE_EQ(prices[3], 1.01 * (39.0 / 2));
  EXPECT_TRUE(miss_prices(f.config, MeasuredCapacity{}, 119, 3).empty());

  // Where one more instance removes no miss and two remove them all, the change is from
  // 1 to 3 (the misses' lower convex hull), and its price buys 3.
  MeasuredCapacity cliff;
  cliff.grid_s = 1800;
  cliff.curves = {CapacityCurve{{1, 2, 4, 8}, {2, 4, 8, 16}}};
  cliff.misses = {{100, 100, 0}};
  const std::vector<double> cliff_prices = miss_prices(f.config, cliff, 119, 4);
  ASSERT_EQ(cliff_prices.size(), 2u);
  EXPECT_DOUBLE_EQ(cliff_prices[1], 1.01 * (2 * 119.0 / 100));
  EXPECT_EQ(bound_schedule(f.config, rates, cliff, cliff_prices[1], BoundForm::kPriced, 0, 1),
            std::vector<std::uint32_t>(119, 3));
}

// The prices swept find every schedule some price gives, on random stretches' misses,
// falling or not, and random floors and ceilings of instances. The slow twin: each
// stretch's cost at a size is a line in the price, so the cheapest sizes change only where
// two lines of one stretch cross; every schedule is the one at 0, between two crossings
// in a row, or past the last.
TEST(BoundPlaysTest, ThePricesSweptFindEveryScheduleSomePriceGives) {
  Fixture f = make_fixture(1800);
  const std::vector<double> rates(119, 1.0);
  engine::Rng rng(56);
  for (int round = 0; round < 300; ++round) {
    const std::size_t stretches = 1 + rng.uniform_int(5);
    const auto at_least = static_cast<std::uint32_t>(1 + rng.uniform_int(2));
    f.config.scaling.manager.min_instances_per_pool = at_least;
    f.config.scaling.manager.max_total_instances = static_cast<std::uint32_t>(2 + rng.uniform_int(8));
    MeasuredCapacity c;
    c.grid_s = 1800.0 / static_cast<double>(stretches);
    c.curves.assign(stretches, CapacityCurve{{1, 2, 4, 8}, {2, 4, 8, 16}});
    for (std::size_t k = 0; k < stretches; ++k) {
      std::vector<double> m;
      double level = static_cast<double>(rng.uniform_int(3000));
      for (std::size_t n = 1 + rng.uniform_int(7); n > 0; --n) {
        m.push_back(level);
        level = rng.uniform_int(4) == 0 ? level + static_cast<double>(rng.uniform_int(50))  // noise
                                        : level * rng.uniform();
      }
      c.misses.push_back(m);
    }
    // Every crossing of two sizes' lines in one stretch (intervals per stretch counted as
    // the bound counts them: by each decision's middle).
    std::vector<double> crossings;
    for (std::size_t k = 0; k < stretches; ++k) {
      double intervals = 0;
      for (std::size_t t = 0; t < rates.size(); ++t) {
        const double middle = 15.0 + (static_cast<double>(t) + 0.5) * 15.0;
        intervals += std::min(stretches - 1, static_cast<std::size_t>(middle / c.grid_s)) == k;
      }
      const std::vector<double>& m = c.misses[k];
      for (std::size_t a = at_least; a <= m.size(); ++a) {
        for (std::size_t b = a + 1; b <= m.size(); ++b) {
          if (m[b - 1] < m[a - 1]) crossings.push_back(static_cast<double>(b - a) * intervals / (m[a - 1] - m[b - 1]));
        }
      }
    }
    std::sort(crossings.begin(), crossings.end());
    const auto schedule = [&](double price) { return bound_schedule(f.config, rates, c, price, BoundForm::kPriced, 0, 1); };
    std::set<std::vector<std::uint32_t>> every{schedule(0.0)}, swept;
    for (std::size_t i = 0; i < crossings.size(); ++i) {
      every.insert(schedule(i + 1 < crossings.size() ? 0.5 * (crossings[i] + crossings[i + 1]) : 2 * crossings[i]));
    }
    for (const double price : miss_prices(f.config, c, rates.size(), 1000)) swept.insert(schedule(price));
    // None swept only where every price gives one schedule.
    if (swept.empty()) {
      EXPECT_EQ(every.size(), 1u) << "round " << round;
    } else {
      EXPECT_EQ(swept, every) << "round " << round;
    }
  }
}

// Played, the priced form reaches the SLOs below the target that the capacity measured
// at the target sizes badly for: its cheapest play holds one instance throughout and
// spends less than any utilisation's, and its dearest meets the target. A 1 / 24 / 1
// requests/s step of 1,000-token outputs.
TEST(BoundPlaysTest, ThePricedBoundsFrontReachesBelowTheTarget) {
  const Fixture f = step_fixture({1, 24, 1}, 500, 1000);
  const EvalWindow window{"steps", 0, 1785, 1};
  engine::ThreadPool pool(2);
  const MeasuredCapacity capacity = measure_capacity(f.config, catalog(), f.workload, window, pool);
  ASSERT_EQ(capacity.error, "");
  // Each stretch's misses, from one instance up to the first size missing nothing: one
  // instance serves the light stages; the heavy one (9 requests/s an instance at the
  // target) needs 3, and fewer miss nearly all of it.
  ASSERT_EQ(capacity.misses.size(), 3u);
  EXPECT_EQ(capacity.misses[0].size(), 1u);
  EXPECT_EQ(capacity.misses[2].size(), 1u);
  const std::vector<double>& heavy = capacity.misses[1];
  ASSERT_EQ(heavy.size(), 3u);
  EXPECT_GT(heavy[1], 0.9 * 24 * 600);
  EXPECT_EQ(heavy[2], 0.0);
  const std::vector<double> rates = interval_rates(*f.config.rl, *f.workload, window);
  const std::vector<double> prices = miss_prices(f.config, capacity, rates.size(), 12);
  ASSERT_FALSE(prices.empty());
  const auto play_at = [&](double price, BoundForm form) {
    const auto sizes = bound_schedule(f.config, rates, capacity, price, form, 60, 1);
    return play_schedule(bound_name(form), price, f.config, catalog(), f.workload, window, 60, 1, 1, sizes);
  };
  ASSERT_EQ(prices.front(), 0.0);
  const Outcome cheapest = play_at(prices.front(), BoundForm::kPriced);
  const Outcome dearest = play_at(prices.back() * 2, BoundForm::kPriced);
  const Outcome loosest = play_at(1.5, BoundForm::kHindsight);
  ASSERT_EQ(cheapest.error, "");
  ASSERT_EQ(dearest.error, "");
  for (const double n : cheapest.instances) EXPECT_EQ(n, 1.0);
  EXPECT_LT(cheapest.slo_attainment, 0.9);
  EXPECT_LT(cheapest.gpu_hours, loosest.gpu_hours);
  EXPECT_GT(dearest.slo_attainment, 0.99);
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
    options.precision.reset();  // a rate question's option: refused for instances
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
