// The evaluation protocol's parts (rl/env/evaluation.hpp): held-out windows, tuning
// windows inside training, the tuning criterion, the hindsight static front and the
// verdict, by hand-computed cases and a property over random recipes.
#include "rl/env/evaluation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/rl/env_fixture.hpp"

namespace meshsim::rl {
namespace {

Outcome outcome(std::string policy, double parameter, double slo, double gpu_hours) {
  Outcome o;
  o.policy = std::move(policy);
  o.parameter = parameter;
  o.slo_attainment = slo;
  o.gpu_hours = gpu_hours;
  return o;
}

configs::RlSpec recipe(double from, double to, double episode_s, std::vector<double> scales) {
  configs::RlSpec spec;
  spec.windows_from_s = from;
  spec.windows_to_s = to;
  spec.episode_length = SimTime::from_seconds(episode_s);
  spec.rate_scales = std::move(scales);
  return spec;
}

TEST(EvaluationTest, TrainingCoversEveryEpisodeAtItsLargestRateScale) {
  const configs::RlSpec spec = recipe(100, 14400, 1800, {0.5, 1.5, 1});
  EXPECT_EQ(spec.training_span().from_s, 100);
  EXPECT_EQ(spec.training_span().to_s, 14400 + 1800 * 1.5);
  // Slower episodes only: still an episode at rate 1, as the tuning windows play.
  EXPECT_EQ(recipe(0, 100, 60, {0.5}).training_span().to_s, 160);
  EXPECT_EQ(check_held_out(spec, {"w", 17100, 600, 1}), "");
  EXPECT_EQ(check_held_out(spec, {"w", 17099, 600, 1}),
            "the window [17099, 17699) s of the workload overlaps the training windows' [100, 17100)");
  EXPECT_EQ(check_held_out(spec, {"w", 0, 50, 2}), "") << "[0, 100) is before training";
  EXPECT_NE(check_held_out(spec, {"w", 0, 51, 2}), "") << "[0, 102) is not";
  configs::RlSpec open = spec;
  open.windows_to_s.reset();  // windows to the workload's end
  EXPECT_NE(check_held_out(open, {"w", 1e9, 600, 1}), "");
}

// Whatever the recipe, the windows baselines are tuned on lie inside training, so none
// can touch a validation or test span the recipe's config accepted.
TEST(EvaluationTest, TuningWindowsLieInsideTrainingForRandomRecipes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 500; ++trial) {
    const double from = 1000 * u(rng);
    const double to = from + 20000 * u(rng);
    configs::RlSpec spec = recipe(from, to, 60 + 3000 * u(rng), {0.25 + 2 * u(rng), 0.25 + 2 * u(rng)});
    spec.tuning_windows = 1 + static_cast<std::uint32_t>(20 * u(rng));
    const configs::TimeSpan training = spec.training_span();
    const configs::TimeSpan test{training.to_s + 5000 * u(rng), training.to_s + 5000 + 5000 * u(rng)};
    const auto windows = tuning_windows(spec, 1e9);
    ASSERT_EQ(windows.size(), spec.tuning_windows);
    for (const EvalWindow& w : windows) {
      EXPECT_GE(w.covers().from_s, training.from_s);
      EXPECT_LE(w.covers().to_s, training.to_s + 1e-9);
      EXPECT_FALSE(w.covers().overlaps(test));
      EXPECT_NE(check_held_out(spec, w), "") << "a tuning window is never held out";
    }
    EXPECT_EQ(windows.front().start_s, from);
    if (spec.tuning_windows > 1) {
      EXPECT_DOUBLE_EQ(windows.back().start_s, to);
    }
  }
}

TEST(EvaluationTest, TheSplitsOfAConfigMustNotOverlapTraining) {
  const auto parse = [](const std::string& rl) {
    return configs::parse_scenario(nlohmann::json::parse(R"({"name": "x", "workload": {"generator": {"name": "g",
        "arrivals": {"kind": "poisson", "rate_per_s": 1}, "prompt_tokens": {"kind": "fixed", "value": 10},
        "output_tokens": {"kind": "fixed", "value": 10}, "duration_s": 100}}, "rl": )" + rl + "}"),
                                   "x.json");
  };
  EXPECT_TRUE(parse(R"({"windows_to_s": 100, "episode_s": 60, "rate_scales": [2], "test": [[220, 300]]})"));
  const auto overlapping = parse(R"({"windows_to_s": 100, "episode_s": 60, "rate_scales": [2], "test": [[219, 300]]})");
  ASSERT_FALSE(overlapping);
  EXPECT_NE(overlapping.error().message.find(
                "rl.test: the span [219, 300) overlaps the training windows' [0, 220) (windows_from_s to windows_to_s "
                "+ episode_s x the largest rate scale, at least 1)"),
            std::string::npos)
      << overlapping.error().message;
  const auto open = parse(R"({"validation": [[500, 600]]})");
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("rl.windows_to_s: expected with validation or test spans"), std::string::npos);
  const auto backwards = parse(R"({"windows_to_s": 10, "validation": [[600, 500]]})");
  ASSERT_FALSE(backwards);
  EXPECT_NE(backwards.error().message.find("rl.validation: expected [from_s, to_s] spans with 0 <= from_s < to_s"),
            std::string::npos);
}

TEST(EvaluationTest, PickTakesTheCheapestReachingTheTargetElseTheHighestAttainment) {
  const std::vector<Outcome> some = {outcome("s", 1, 0.95, 10), outcome("s", 2, 0.991, 20), outcome("s", 3, 0.999, 30),
                                     outcome("s", 4, 0.990, 15)};
  EXPECT_EQ(pick(some, 0.99), 3);   // 0.990 reaches 0.99, and 15 < 20 < 30
  EXPECT_EQ(pick(some, 0.995), 2);  // only 0.999 reaches it
  EXPECT_EQ(pick(some, 0.9999), 2); // none: the highest attainment
  const std::vector<Outcome> tie = {outcome("s", 1, 0.9, 20), outcome("s", 2, 0.9, 10)};
  EXPECT_EQ(pick(tie, 0.99), 1);  // equal attainment below the target: the cheaper
  std::vector<Outcome> failed = {outcome("s", 1, 1.0, 1)};
  failed[0].error = "boom";
  EXPECT_EQ(pick(failed, 0.99), -1);
}

// Several recipes: each held to its own target, so a busy recipe's SLO cannot buy a quiet
// one's; among those holding all, the cheapest over all; else the least worst shortfall.
TEST(EvaluationTest, PickPerRecipeHoldsEveryRecipeToItsOwnTarget) {
  const auto two = [](double slo_a, double gpu_a, double slo_b, double gpu_b) {
    return std::vector<Outcome>{outcome("p", 0, slo_a, gpu_a), outcome("p", 0, slo_b, gpu_b)};
  };
  const std::vector<double> targets = {0.99, 0.97};
  // 0: cheapest, but misses recipe b's 0.97; 1 and 2 hold both, 2 cheaper in total.
  EXPECT_EQ(pick_per_recipe({two(0.999, 10, 0.96, 10), two(0.99, 30, 0.98, 20), two(0.995, 20, 0.97, 25)}, targets), 2);
  // None holds both: the least worst shortfall (0: 0.02 short on b; 1: 0.01 short on a).
  EXPECT_EQ(pick_per_recipe({two(0.999, 10, 0.95, 10), two(0.98, 30, 0.99, 30)}, targets), 1);
  // Equal shortfalls (0.25 each, exact in binary): the cheaper.
  EXPECT_EQ(pick_per_recipe({two(0.5, 30, 0.5, 30), two(0.75, 5, 0.25, 5)}, {0.75, 0.5}), 1);
  // A failed play is never chosen.
  std::vector<Outcome> failed = two(1, 1, 1, 1);
  failed[1].error = "boom";
  EXPECT_EQ(pick_per_recipe({failed, two(0.5, 9, 0.5, 9)}, targets), 1);
  EXPECT_EQ(pick_per_recipe({failed}, targets), -1);
}

TEST(EvaluationTest, PooledPlaysCountRequestsAndHours) {
  Outcome a = outcome("static", 3, 0, 6), b = outcome("static", 3, 0, 12);
  a.left = 100, a.slo_met = 90, a.hours = 0.5, a.mean_instances = 3, a.actions_per_hour = 4, a.reward = -1;
  b.left = 300, b.slo_met = 300, b.hours = 1.5, b.mean_instances = 5, b.actions_per_hour = 0, b.reward = -2;
  const Outcome all = pooled({a, b});
  EXPECT_DOUBLE_EQ(all.slo_attainment, 390.0 / 400.0);
  EXPECT_DOUBLE_EQ(all.gpu_hours, 18);
  EXPECT_DOUBLE_EQ(all.hours, 2);
  EXPECT_DOUBLE_EQ(all.mean_instances, (3 * 0.5 + 5 * 1.5) / 2);
  EXPECT_DOUBLE_EQ(all.actions_per_hour, 2.0 / 2);
  EXPECT_DOUBLE_EQ(all.reward, -3);
}

TEST(EvaluationTest, TheStaticFrontInterpolatesInLogMissRate) {
  // Sizes 1..4: misses 10%, 1%, 0.1%, and size 4 no better than 3 (made monotone).
  const std::vector<Outcome> statics = {outcome("static", 2, 0.99, 20), outcome("static", 1, 0.90, 10),
                                        outcome("static", 4, 0.998, 40), outcome("static", 3, 0.999, 30)};
  EXPECT_DOUBLE_EQ(*front_gpu_hours(statics, 0.5), 10);   // below the smallest: its cost
  EXPECT_DOUBLE_EQ(*front_gpu_hours(statics, 0.99), 20);  // on a size
  // 0.3162% misses is half-way between 1% and 0.1% in log space: half-way in GPU-hours.
  EXPECT_NEAR(*front_gpu_hours(statics, 1 - std::sqrt(0.01 * 0.001)), 25, 1e-9);
  EXPECT_DOUBLE_EQ(*front_gpu_hours(statics, 0.999), 30);
  EXPECT_FALSE(front_gpu_hours(statics, 0.9995)) << "above every size";
  EXPECT_FALSE(front_gpu_hours({}, 0.9));
}

TEST(EvaluationTest, TheVerdictComparesWithTunedBaselinesAndEveryFront) {
  const Outcome policy = outcome("ppo", kNoParameter, 0.995, 40);
  const std::vector<Outcome> tuned = {outcome("static", 6, 0.996, 60), outcome("elastic", 32, 0.990, 45),
                                      outcome("target_tracking_rate", 2, 0.997, 50),
                                      outcome("target_tracking_requests", 16, 0.999, 55)};
  Fronts fronts;
  fronts.statics = {outcome("static", 4, 0.99, 40), outcome("static", 5, 0.999, 50)};
  // Two target trackings' grids: requests' front reaches 99.5% at 44 GPU-h, rate's at 48.
  fronts.tracking = {outcome("target_tracking_requests", 32, 0.99, 40), outcome("target_tracking_requests", 16, 0.999, 55),
                     outcome("target_tracking_rate", 4, 0.98, 30), outcome("target_tracking_rate", 2, 0.995, 48)};
  fronts.bound_hindsight = {outcome("bound_hindsight", 0.8, 0.995, 30)};
  fronts.bound_smoothed = {outcome("bound_smoothed", 0.8, 0.995, 36)};
  const Verdict v = judge(policy, tuned, fronts, 0.99);
  EXPECT_EQ(v.rival, 2);  // the cheapest at 0.995 or better; elastic is cheaper but below
  EXPECT_DOUBLE_EQ(*v.saving_vs_rival, 1 - 40.0 / 50);
  EXPECT_EQ(v.cheapest_meeting, 1);  // elastic meets the 99% target
  EXPECT_DOUBLE_EQ(*v.cost_ratio, 40.0 / 45);
  // 0.5% misses between 1% (40 GPU-h) and 0.1% (50): log(2)/log(10) of the way.
  const double between = std::log(2.0) / std::log(10.0);
  EXPECT_NEAR(*v.front_gpu_hours, 40 + 10 * between, 1e-9);
  EXPECT_NEAR(*v.tracking_front_gpu_hours, std::min(40 + 15 * between, 48.0), 1e-9);
  EXPECT_DOUBLE_EQ(*v.bound_gpu_hours, 30);
  EXPECT_DOUBLE_EQ(*v.bound_smoothed_gpu_hours, 36);
  const double tracking = *v.tracking_front_gpu_hours;
  EXPECT_NEAR(*v.gap_closed, (tracking - 40) / (tracking - 30), 1e-12);
  EXPECT_NEAR(*v.gap_closed_smoothed, (tracking - 40) / (tracking - 36), 1e-12);

  // Above every baseline and front: no rival, no front at its SLO; it costs more than the
  // cheapest meeting the target, and says how many times.
  const Verdict best = judge(outcome("ppo", kNoParameter, 0.9999, 90), tuned, fronts, 0.99);
  EXPECT_EQ(best.rival, -1);
  EXPECT_FALSE(best.saving_vs_rival);
  EXPECT_FALSE(best.front_gpu_hours);
  EXPECT_FALSE(best.tracking_front_gpu_hours);
  EXPECT_FALSE(best.gap_closed);
  EXPECT_DOUBLE_EQ(*best.cost_ratio, 2.0);
  // Nobody meets the target: no ratio.
  EXPECT_FALSE(judge(policy, tuned, fronts, 0.9999).cost_ratio);
  // A bound that is not (or barely) below the front leaves no gap to share: undefined,
  // not a share of thousands of percent.
  for (const double bound : {tracking * 1.02, tracking, tracking * (1 - kLeastGap / 2)}) {
    Fronts close = fronts;
    close.bound_hindsight = {outcome("bound_hindsight", 0.8, 0.995, bound)};
    const Verdict near = judge(policy, tuned, close, 0.99);
    EXPECT_DOUBLE_EQ(*near.bound_gpu_hours, bound);
    EXPECT_FALSE(near.gap_closed) << bound;
    EXPECT_TRUE(near.gap_closed_smoothed);
  }
}

// The bound is the cheaper of its full-hindsight and smoothed fronts at a play's SLO; a
// play below it there is a defect of the bound, one above it or beyond the bound's best
// SLO is not.
TEST(EvaluationTest, PlaysTheBoundLiesAboveAreReportedAsItsDefects) {
  Fronts fronts;
  fronts.bound_hindsight = {outcome("bound_hindsight", 1.0, 0.99, 20), outcome("bound_hindsight", 0.8, 0.999, 30)};
  fronts.bound_smoothed = {outcome("bound_smoothed", 1.0, 0.99, 18), outcome("bound_smoothed", 0.8, 0.995, 26)};
  EXPECT_DOUBLE_EQ(*bound_at(fronts, 0.99), 18);
  EXPECT_DOUBLE_EQ(*bound_at(fronts, 0.999), 30);  // only the hindsight form reaches it
  EXPECT_FALSE(bound_at(fronts, 0.9999));
  const Outcome cheaper = outcome("ppo", kNoParameter, 0.99, 17.5), dearer = outcome("static", 3, 0.99, 19),
                beyond = outcome("static", 9, 0.9999, 10);
  const auto defects = bound_defects(fronts, {&cheaper, &dearer, &beyond});
  ASSERT_EQ(defects.size(), 1u);
  EXPECT_EQ(defects[0].play, &cheaper);
  EXPECT_DOUBLE_EQ(defects[0].bound_gpu_hours, 18);

  // The priced plays join the hindsight ones in one front (both know the load ahead):
  // at 97% it runs between the priced play at 95% and the hindsight one at 99%, 0.317 of
  // the way in log miss rate, below the smoothed form's cheapest; a play below 99% that
  // was a defect of the utilisations' front alone is above this one.
  fronts.bound_priced = {outcome("bound_priced", 0.5, 0.95, 12)};
  const double way = std::log(0.05 / 0.03) / std::log(5.0);
  EXPECT_NEAR(*bound_at(fronts, 0.97), 12 + 8 * way, 1e-9);
  EXPECT_DOUBLE_EQ(*bound_at(fronts, 0.9), 12);
  const Outcome lower = outcome("target_tracking_rate", 4, 0.97, 15);
  EXPECT_TRUE(bound_defects(fronts, {&lower}).empty());
  const Verdict v = judge(lower, {}, fronts, 0.99);
  EXPECT_NEAR(*v.bound_gpu_hours, 12 + 8 * way, 1e-9);
  EXPECT_DOUBLE_EQ(*v.bound_smoothed_gpu_hours, 18);

  // The static sizes are schedules known in hindsight too: one cheaper than every
  // right-sizing play (it starts at its own size, they at the tuned one) is the bound's
  // cheapest end, not a defect of it.
  const Outcome smallest = outcome("static", 1, 0.3, 8);
  fronts.statics = {smallest};
  EXPECT_DOUBLE_EQ(*bound_at(fronts, 0.3), 8);
  EXPECT_TRUE(bound_defects(fronts, {&smallest}).empty());
}

TEST(EvaluationTest, PoliciesAreJudgedAtEveryDelayTheRecipeTrainsAt) {
  configs::ScenarioConfig config = *configs::load_scenario(configs::default_training_path());
  ASSERT_TRUE(config.rl);
  config.rl->scale_up_delays_s = {10, 60, 180};
  EXPECT_EQ(trained_delays(config), (std::vector<double>{10, 60, 180}));
  config.rl->scale_up_delays_s.clear();
  config.scaling.manager.scale_up_delay = SimTime::from_seconds(42);
  EXPECT_EQ(trained_delays(config), (std::vector<double>{42}));
}

TEST(EvaluationTest, TheHindsightFrontIsCompleteOnceTwoSizesInARowGainAlmostNothing) {
  const auto sizes = [](std::vector<double> slos) {
    StaticPlays plays;
    for (const double slo : slos) {
      Outcome o = outcome("static", double(plays.size() + 1), slo, 1);
      o.left = 100'000;
      o.slo_met = static_cast<std::uint64_t>(std::llround(slo * 100'000));
      plays.push_back({o});
    }
    return plays;
  };
  EXPECT_FALSE(front_saturated(sizes({0.5, 0.98, 0.98}), 0.99)) << "below the target";
  EXPECT_FALSE(front_saturated(sizes({0.5, 0.995, 0.99505}), 0.99)) << "one flat step, after a rise";
  EXPECT_TRUE(front_saturated(sizes({0.995, 0.99505, 0.9951}), 0.99));
  EXPECT_FALSE(front_saturated(sizes({0.995, 0.99505, 0.9953}), 0.99)) << "still rising 0.02 points";
  EXPECT_TRUE(reaches_target(sizes({0.5, 0.991}), 0.99));
  EXPECT_FALSE(reaches_target(sizes({0.991, 0.5}), 0.99)) << "the largest size so far decides";
}

// Plays through the environment: a static size holds its instances for the window, and a
// sweep stops at the first size reaching the target.
TEST(EvaluationTest, StaticSweepStopsAtTheFirstSizeReachingTheTarget) {
  const Fixture f = make_fixture(300);
  engine::ThreadPool pool(2);
  const std::vector<EvalWindow> windows = {{"a", 0, 300, 1}, {"b", 1200, 300, 1}};
  const auto all = sweep_statics(f.config, catalog(), f.workload, windows, 6, [](const StaticPlays&) { return false; }, pool);
  ASSERT_EQ(all.size(), 6u);
  int first = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    ASSERT_EQ(all[k].size(), 2u);
    for (const Outcome& o : all[k]) {
      EXPECT_EQ(o.error, "");
      EXPECT_EQ(o.parameter, k + 1);
      EXPECT_EQ(o.scale_ups + o.scale_downs, 0u);
      EXPECT_NEAR(o.gpu_hours, (k + 1) * 4 * 300.0 / 3600, 1e-9);
    }
    if (first == 0 && pooled(all[k]).slo_attainment >= 0.99) first = static_cast<int>(k + 1);
  }
  ASSERT_GT(first, 0);
  const auto stopped =
      sweep_statics(f.config, catalog(), f.workload, windows, 6,
                    [](const StaticPlays& so_far) { return reaches_target(so_far, 0.99); }, pool);
  EXPECT_EQ(stopped.size(), static_cast<std::size_t>(first));
  for (std::size_t k = 0; k < stopped.size(); ++k) EXPECT_EQ(stopped[k][1].slo_met, all[k][1].slo_met);
}

}  // namespace
}  // namespace meshsim::rl
