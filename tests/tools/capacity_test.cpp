// meshsim capacity: the searches against brute force on random monotone answers, and the
// command against a brute-force sweep of replays on a small case.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/capacity_command.hpp"
#include "sim/run/capacity_search.hpp"
#include "tools/cli/commands.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::cli {
namespace {

using run::fewest_meeting;
using run::highest_meeting;
using run::kProbesPerRound;
using testing::csv_rows;
using testing::fresh_dir;
using testing::slurp;

TEST(CapacitySearchTest, TheFewestMeetingIsFoundProbingEachPointOnce) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t max = 1 + static_cast<std::int64_t>(rng() % 300);
    // The first meeting point, or none (max + 1).
    const std::int64_t threshold = 1 + static_cast<std::int64_t>(rng() % (max + 1));
    std::set<std::int64_t> probed;
    std::size_t rounds = 0;
    const auto answer = fewest_meeting(max, [&](const std::vector<std::int64_t>& xs) {
      ++rounds;
      EXPECT_LE(xs.size(), kProbesPerRound);
      std::vector<bool> met;
      for (const auto x : xs) {
        EXPECT_TRUE(x >= 1 && x <= max) << x;
        EXPECT_TRUE(probed.insert(x).second) << "probed twice: " << x;
        met.push_back(x >= threshold);
      }
      return met;
    });
    if (threshold > max) {
      EXPECT_FALSE(answer) << "max " << max;
    } else {
      ASSERT_TRUE(answer) << "max " << max << ", threshold " << threshold;
      EXPECT_EQ(*answer, threshold) << "max " << max;
    }
    EXPECT_LE(rounds, 12u) << "max " << max << ", threshold " << threshold;
  }
}

// In every shape: rounds of three (threads), a plain bisection (one thread), and a first
// step close to the start (a good guess).
TEST(CapacitySearchTest, TheHighestMeetingRateIsFoundWithinThePrecision) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> log_rate(-8, 8);
  const run::RateSearch shapes[] = {{}, {1, 2.0}, {1, 1.25}, {3, 1.1}};
  for (int trial = 0; trial < 2000; ++trial) {
    const run::RateSearch shape = shapes[trial % 4];
    const double threshold = std::exp(log_rate(rng));  // meets up to here
    // Half the starts a guess within 20% of the answer.
    const double start = trial % 2 == 0 ? std::exp(log_rate(rng)) : threshold * std::exp((log_rate(rng) / 8) * 0.2);
    const double lowest = 1e-3, highest = 1e3, precision = 0.02;
    std::set<double> probed;
    const auto answer = highest_meeting(start, lowest, highest, precision, [&](const std::vector<double>& rates) {
      std::vector<bool> met;
      for (const double r : rates) {
        EXPECT_TRUE(r >= lowest && r <= highest) << r;
        EXPECT_TRUE(probed.insert(r).second) << "probed twice: " << r;
        met.push_back(r <= threshold);
      }
      EXPECT_LE(rates.size(), shape.per_round);
      return met;
    }, shape);
    if (threshold < lowest) {
      EXPECT_FALSE(answer) << threshold;
    } else if (threshold >= highest) {
      ASSERT_TRUE(answer);
      EXPECT_EQ(*answer, highest);
    } else {
      ASSERT_TRUE(answer) << "threshold " << threshold << ", start " << start;
      EXPECT_LE(*answer, threshold);
      EXPECT_GT(*answer * (1 + precision), threshold) << "start " << start;
    }
  }
}

// The default scenario's first five minutes at four times its rate: the search's answer
// and every probe's figures equal what replays of each size, run one by one, say, the
// requests still in the system at the end counted as misses.
TEST(CapacityCommandTest, TheAnswerIsWhatABruteForceSweepOfReplaysFinds) {
  const auto dir = fresh_dir("capacity");
  CapacityCommandOptions options;
  options.rate_scale = 4;
  options.until_s = 300;
  options.target = 0.99;
  options.max_instances = 6;
  options.out_dir = (dir / "search").string();
  options.plot = false;
  std::ostringstream out, err;
  ASSERT_EQ(run_capacity_command(options, out, err), kExitOk) << err.str();
  const auto probes = csv_rows(slurp(dir / "search/capacity.csv"));
  ASSERT_FALSE(probes.empty());
  std::map<std::uint32_t, double> searched;
  for (const auto& row : probes) searched[std::stoul(row.at("instances"))] = std::stod(row.at("slo_attainment"));

  std::optional<std::uint32_t> fewest;
  for (std::uint32_t n = 1; n <= options.max_instances; ++n) {
    ReplayCommandOptions replay;
    replay.rate_scale = 4;
    replay.until_s = 300;
    replay.quiet = true;
    replay.sets = {"serving.start_state.0.count=" + std::to_string(n)};
    replay.out_dir = (dir / ("n" + std::to_string(n))).string();
    std::ostringstream replay_out, replay_err;
    ASSERT_EQ(run_replay_command(replay, replay_out, replay_err), kExitOk) << replay_err.str();
    const auto summary = nlohmann::json::parse(slurp(dir / ("n" + std::to_string(n)) / "summary.json"));
    // The replay judges the requests that left; the search counts those still in the
    // system at --until that already missed their TTFT target (1 s) as misses too.
    const auto& requests = summary["requests"];
    const double left = requests["completed"].get<double>() + requests["dropped"].get<double>() -
                        requests["dropped_for"].value("over_context", 0.0);
    const double met = std::round(summary["slo"]["attainment"].get<double>() * left);
    double late = 0;
    for (const auto& row : csv_rows(slurp(dir / ("n" + std::to_string(n)) / "requests.csv"))) {
      if (row.at("status") != "in_flight") continue;
      late += row.at("ttft_s").empty() ? std::stod(row.at("arrival_s")) + 1.0 < 300 : std::stod(row.at("ttft_s")) > 1.0;
    }
    const double attainment = met / (left + late);
    if (!fewest && attainment >= options.target) fewest = n;
    if (const auto it = searched.find(n); it != searched.end()) {
      EXPECT_NEAR(it->second, attainment, 1e-6) << n << " instances: the search's probe is a replay";
    }
  }
  ASSERT_TRUE(fewest) << "the case needs a size that meets the target";
  EXPECT_GT(*fewest, 1u) << "the case needs a size that does not";
  EXPECT_NE(out.str().find("capacity    " + std::to_string(*fewest) + " mixed instance"), std::string::npos)
      << out.str();
  EXPECT_TRUE(searched.count(*fewest) && searched.count(*fewest - 1)) << "the answer and the size below were probed";
}

// A probe that judged no request (every arrival past the context at a rate the run ends
// within) has no attainment or latency: empty cells and "-", never 0% and 0 s.
TEST(CapacityCommandTest, AProbeThatJudgedNothingShowsNoFigure) {
  const auto dir = fresh_dir("capacity_nothing");
  CapacityCommandOptions options;
  options.rate_scale = 1e6;
  options.until_s = 1;
  options.max_instances = 4;
  options.out_dir = dir.string();
  options.plot = false;
  std::ostringstream out, err;
  ASSERT_EQ(run_capacity_command(options, out, err), kExitOk) << err.str();
  const auto probes = csv_rows(slurp(dir / "capacity.csv"));
  ASSERT_FALSE(probes.empty());
  for (const auto& row : probes) {
    ASSERT_EQ(row.at("judged"), "0");
    EXPECT_EQ(row.at("slo_attainment"), "");
    EXPECT_EQ(row.at("ttft_p99_s"), "");
    EXPECT_EQ(row.at("tbt_p99_s"), "");
    EXPECT_EQ(row.at("meets_target"), "0");
  }
  EXPECT_NE(out.str().find("meet - of the 99.0% target"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("0.0%"), std::string::npos) << out.str();
}

TEST(CapacityCommandTest, BadOptionsAndAScenarioItCannotSizeAreRefused) {
  const auto refused = [](CapacityCommandOptions options, const std::string& words) {
    options.plot = false;
    options.out_dir = fresh_dir("capacity_bad").string();
    std::ostringstream out, err;
    EXPECT_EQ(run_capacity_command(options, out, err), kExitBadInput) << words;
    EXPECT_NE(err.str().find(words), std::string::npos) << err.str();
  };
  CapacityCommandOptions o;
  o.find = "nodes";
  refused(o, "--find: expected instances or rate");
  o = {};
  o.target = 1.5;
  refused(o, "--target: expected an SLO attainment in (0, 1]");
  o = {};
  o.pool = "token";
  refused(o, "--pool: expected a pool of the start state (mixed), got 'token'");
  o = {};
  o.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json";
  refused(o, "capacity sizes serving alone");
}

}  // namespace
}  // namespace meshsim::cli

namespace meshsim::cli {
namespace {

// --compare-skus answers each SKU as the one-SKU search of the same scenario with that SKU
// set does, and prices the answer by hardware.json.
TEST(CapacityCommandTest, ComparingSkusAnswersEachAsItsOwnSearchAndPricesIt) {
  const auto dir = fresh_dir("capacity_compare");
  CapacityCommandOptions options;
  options.rate_scale = 4;
  options.until_s = 300;
  options.max_instances = 8;
  options.plot = false;
  options.out_dir = (dir / "compare").string();
  options.compare_skus = {"h100-80gb:4", "h200-141gb:2", "b200-180gb"};
  std::ostringstream out, err;
  ASSERT_EQ(run_capacity_command(options, out, err), kExitOk) << err.str();
  const auto rows = csv_rows(slurp(dir / "compare/compare.csv"));
  ASSERT_EQ(rows.size(), 3u);
  const std::map<std::string, double> price = {{"h100-80gb", 98.32}, {"h200-141gb", 108.15}, {"b200-180gb", 113.93}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("sku"));
    CapacityCommandOptions one = options;
    one.compare_skus.clear();
    one.sets = {"serving.sku=" + row.at("sku"), "serving.tensor_parallel=" + row.at("tensor_parallel")};
    one.out_dir = (dir / row.at("sku")).string();
    std::ostringstream one_out, one_err;
    ASSERT_EQ(run_capacity_command(one, one_out, one_err), kExitOk) << one_err.str();
    const std::uint32_t n = std::stoul(row.at("instances")), tp = std::stoul(row.at("tensor_parallel"));
    EXPECT_NE(one_out.str().find("capacity    " + std::to_string(n) + " mixed instance"), std::string::npos)
        << one_out.str();
    EXPECT_EQ(slurp(dir / row.at("sku") / "capacity.csv"),
              slurp(dir / "compare" / ("capacity-" + row.at("sku") + "-tp" + std::to_string(tp) + ".csv")));
    EXPECT_EQ(std::stoul(row.at("gpus")), n * tp);
    EXPECT_EQ(std::stoul(row.at("servers")), (n * tp + 7) / 8);
    EXPECT_NEAR(std::stod(row.at("gpu_cost_per_hour")), n * tp / 8.0 * price.at(row.at("sku")), 0.01);
    EXPECT_EQ(row.at("step_time_factors"), "fitted");
  }
  EXPECT_EQ(rows[2].at("tensor_parallel"), "4");  // no TP given: the scenario's
  EXPECT_NE(out.str().find("cheapest    "), std::string::npos) << out.str();

  for (const auto& [entries, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"h100-80gb:0"}, "--compare-skus: expected SKU or SKU:TP (h200-141gb:2), got 'h100-80gb:0'"},
           {{"h100-80gb:4", "z100:4"}, "--compare-skus: no SKU or alias 'z100' in hardware.json"},
           {{":4"}, "--compare-skus: expected a SKU name"}}) {
    CapacityCommandOptions bad = options;
    bad.compare_skus = entries;
    std::ostringstream bad_out, bad_err;
    EXPECT_EQ(run_capacity_command(bad, bad_out, bad_err), kExitBadInput) << entries[0];
    EXPECT_NE(bad_err.str().find(says), std::string::npos) << bad_err.str();
  }
  CapacityCommandOptions rate = options;
  rate.find = "rate";
  std::ostringstream rate_out, rate_err;
  EXPECT_EQ(run_capacity_command(rate, rate_out, rate_err), kExitBadInput);
  EXPECT_NE(rate_err.str().find("--compare-skus: compares the fewest instances"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::cli
