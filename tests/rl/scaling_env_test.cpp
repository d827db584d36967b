#include "rl/env/scaling_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <set>

#include "tests/rl/env_fixture.hpp"
#include "traces/list_source.hpp"

namespace meshsim::rl {
namespace {

ResetOptions window_at(double start_s) {
  ResetOptions options;
  options.window_start_s = start_s;
  options.rate_scale = 1.0;
  return options;
}

// Where the feature named `name` sits in the environment's observation.
std::size_t feature(const ScalingEnv& env, std::string_view name) {
  const std::vector<std::string> names = env.observation_names();
  const auto at = std::find(names.begin(), names.end(), name);
  EXPECT_NE(at, names.end()) << name;
  return static_cast<std::size_t>(at - names.begin());
}

ResetOptions delay_of(double seconds) {
  ResetOptions options;
  options.scale_up_delay_s = seconds;
  return options;
}

TEST(WindowSourceTest, TakesTheWindowAndDividesOffsetsByTheRateScale) {
  traces::ListSource list({{0.0, 10, 5}, {1.0, 10, 5}, {2.0, 10, 5}, {3.0, 10, 5}, {5.0, 10, 5}});
  const auto trace = *traces::load_trace(list);
  // Length 1 s at rate scale 2 covers [1, 3) of the trace, squeezed into one second.
  traces::WindowSource window(trace, SimTime::from_seconds(1), SimTime::from_seconds(1), 2.0);
  EXPECT_EQ(window.size(), 2u);
  const auto first = **window.next();
  const auto second = **window.next();
  EXPECT_EQ(first.id, 1u);
  EXPECT_EQ(first.arrival, SimTime::zero());
  EXPECT_EQ(second.arrival, SimTime::from_ms(500));
  EXPECT_FALSE(window.next()->has_value());
  EXPECT_DOUBLE_EQ(window.progress(), 1.0);
}

TEST(WindowSourceTest, LoadingAnUnboundedWorkloadIsRefused) {
  traces::ListSource list({{0.0, 10, 5}, {1.0, 10, 5}, {2.0, 10, 5}});
  const auto loaded = traces::load_trace(list, 2);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("more than 2 requests"), std::string::npos);
}

TEST(ScalingEnvTest, EpisodesTruncateAtTheWindowEndAndNeverTerminate) {
  auto f = make_fixture(/*episode_s=*/120, /*interval_s=*/15);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  EXPECT_EQ(env->steps_per_episode(), 8u);
  EXPECT_EQ(env->action_size(), 1u);  // one pool: mixed
  std::vector<float> obs(env->observation_size());
  EXPECT_DOUBLE_EQ(env->reset(7, obs).sim_seconds, 15.0);  // the warm-up
  for (const float x : obs) EXPECT_TRUE(std::isfinite(x));
  const float hold = 0.0f;
  for (std::uint32_t i = 0; i < env->steps_per_episode(); ++i) {
    const StepResult r = env->step({&hold, 1}, obs);
    EXPECT_FALSE(r.terminated);
    EXPECT_EQ(r.truncated, i + 1 == env->steps_per_episode());
    EXPECT_DOUBLE_EQ(r.info.sim_seconds, 15.0 * (i + 2));
    for (const float x : obs) EXPECT_TRUE(std::isfinite(x));
  }
  EXPECT_THROW(env->step({&hold, 1}, obs), std::logic_error);
  env->reset(std::nullopt, obs);  // a new episode goes on
  EXPECT_NO_THROW(env->step({&hold, 1}, obs));
}

TEST(ScalingEnvTest, ResetOptionsOutsideWhatAConfigAcceptsAreRefusedNamingTheOption) {
  auto f = make_fixture(/*episode_s=*/120, /*interval_s=*/15);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto refused = [&](ResetOptions options, const std::string& key) {
    const Status checked = env->check(options);
    ASSERT_FALSE(checked) << key;
    EXPECT_NE(checked.error().message.find("reset option " + key + ": expected"), std::string::npos)
        << checked.error().message;
  };
  refused({nan, std::nullopt, std::nullopt, std::nullopt}, "window_start_s");
  refused({-1.0, std::nullopt, std::nullopt, std::nullopt}, "window_start_s");
  refused({std::nullopt, 0.0, std::nullopt, std::nullopt}, "rate_scale");
  refused({std::nullopt, 1e7, std::nullopt, std::nullopt}, "rate_scale");
  refused({std::nullopt, std::nullopt, 2e12, std::nullopt}, "scale_up_delay_s");
  refused({std::nullopt, std::nullopt, std::nullopt, 0u}, "start_instances");
  // Past scaling.max_total_instances: refused, not built (a billion instances took 24 GB).
  refused({std::nullopt, std::nullopt, std::nullopt, f.config.scaling.manager.max_total_instances + 1}, "start_instances");
  EXPECT_TRUE(env->check({0.0, 1.0, 0.0, 1u}));
  EXPECT_TRUE(env->check({}));
}

TEST(ScalingEnvTest, ActionsAreCheckedAgainstTheActionKindsSpace) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto kind : {configs::ActionKind::kDiscrete, configs::ActionKind::kTarget,
                          configs::ActionKind::kResidual, configs::ActionKind::kContinuous}) {
    auto f = make_fixture(/*episode_s=*/120, /*interval_s=*/15);
    f.config.rl->action = kind;
    auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
    ASSERT_EQ(env->action_size(), 1u);
    const auto fits = [&](float value) { return env->check_action(std::span(&value, 1)).has_value(); };
    EXPECT_TRUE(fits(nan));
    EXPECT_TRUE(fits(0.0f));
    EXPECT_FALSE(fits(std::numeric_limits<float>::infinity()));
    const std::vector<float> two{0.0f, 0.0f};
    EXPECT_FALSE(env->check_action(two));
    if (kind == configs::ActionKind::kContinuous) {
      EXPECT_TRUE(fits(-3.0f));  // a Gaussian sample; the environment clips it
      EXPECT_TRUE(fits(1e6f));
      continue;
    }
    const auto last = static_cast<float>(env->discrete_choices() - 1);
    EXPECT_TRUE(fits(last));
    EXPECT_FALSE(fits(last + 1.0f));
    EXPECT_FALSE(fits(1e6f));
    EXPECT_FALSE(fits(-3.0f));
    EXPECT_FALSE(fits(0.5f));
    // A cursor is checked action by action.
    EnvCursor cursor;
    cursor.actions = {0.0f, 1e6f};
    const Status checked = env->check_cursor(cursor);
    ASSERT_FALSE(checked);
    EXPECT_NE(checked.error().message.find("actions[1...]: expected a choice in [0, "), std::string::npos)
        << checked.error().message;
  }
}

TEST(ScalingEnvTest, TheSameSeedGivesTheSameEpisode) {
  auto f = make_fixture();
  auto a = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  auto b = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs_a(a->observation_size()), obs_b(b->observation_size());
  const EnvInfo ia = a->reset(3, obs_a);
  const EnvInfo ib = b->reset(3, obs_b);
  EXPECT_EQ(ia.window_start_s, ib.window_start_s);
  EXPECT_EQ(obs_a, obs_b);
  for (int i = 0; i < 20; ++i) {
    const float action = static_cast<float>(std::sin(i));
    const StepResult ra = a->step({&action, 1}, obs_a);
    const StepResult rb = b->step({&action, 1}, obs_b);
    ASSERT_EQ(ra.reward, rb.reward) << "step " << i;
    ASSERT_EQ(obs_a, obs_b) << "step " << i;
  }
  // Another seed draws another window.
  EXPECT_NE(a->reset(4, obs_a).window_start_s, ia.window_start_s);
}

TEST(ScalingEnvTest, ActionsResizeThePoolWithinTheLimits) {
  auto f = make_fixture();
  f.config.scaling.manager.max_total_instances = 6;
  f.config.scaling.manager.scale_up_delay = SimTime::from_seconds(10);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  EnvInfo info = env->reset(1, obs);
  EXPECT_EQ(info.active, 4u);  // the start state
  const float up = 1.0f;       // +5 instances, only 2 fit under the cap of 6
  StepResult r = env->step({&up, 1}, obs);
  EXPECT_EQ(r.info.scale_ups, 2u);
  EXPECT_GE(r.info.blocked, 1u);
  EXPECT_EQ(r.info.active, 6u);  // the 10 s cold start is over by the interval's end
  const float down = -1.0f;      // -5, but the pool keeps min_instances_per_pool (1)
  r = env->step({&down, 1}, obs);
  EXPECT_EQ(r.info.scale_downs, 5u);
  EXPECT_EQ(r.info.active, 1u);  // the others drain (and may already be gone)
  r = env->step({&down, 1}, obs);
  EXPECT_EQ(r.info.scale_downs, 0u);
  EXPECT_GE(r.info.blocked, 1u);
}

TEST(ScalingEnvTest, EachEpisodeDrawsItsScaleUpDelayAndTheObservationShowsIt) {
  auto f = make_fixture();
  f.config.rl->scale_up_delays_s = {0, 40};
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  const float up = 0.2f;  // +1 instance
  std::set<double> seen;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const EnvInfo info = env->reset(seed, obs);
    seen.insert(info.scale_up_delay_s);
    ASSERT_TRUE(info.scale_up_delay_s == 0 || info.scale_up_delay_s == 40);
    EXPECT_FLOAT_EQ(obs[feature(*env, "delay")], static_cast<float>(std::log1p(info.scale_up_delay_s / 15.0)));
    // The scale-up is STARTING until the episode's delay is over: 0 s, or past two intervals.
    StepResult r = env->step({&up, 1}, obs);
    EXPECT_EQ(r.info.starting, info.scale_up_delay_s == 0 ? 0u : 1u) << "seed " << seed;
    const float hold = 0.0f;
    r = env->step({&hold, 1}, obs);
    EXPECT_EQ(r.info.starting, info.scale_up_delay_s == 0 ? 0u : 1u);
    r = env->step({&hold, 1}, obs);
    EXPECT_EQ(r.info.starting, 0u);
    EXPECT_EQ(r.info.active, 5u);
  }
  EXPECT_EQ(seen.size(), 2u);
  // Evaluation fixes the delay.
  EXPECT_EQ(env->reset(3, obs, delay_of(25.0)).scale_up_delay_s, 25.0);
}

TEST(ScalingEnvTest, EveryFeatureHasOneNamePoolsFirst) {
  auto f = make_fixture();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  const std::vector<std::string> names = observation_names({env->pools(), false, {}});
  ASSERT_EQ(names.size(), env->observation_size());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(names.front(), "mixed.active");
  EXPECT_EQ(names[kPoolFeatures - 1], "mixed.waiting");
  EXPECT_EQ(names.back(), "burst_5m");
  const std::array<cluster::InstanceTag, 2> split = {cluster::InstanceTag::kPrompt, cluster::InstanceTag::kToken};
  EXPECT_EQ(observation_names({split, false, {}})[kPoolFeatures + 7], "token.kv");
}

// Every feature stays in the range its table gives (what the Python spaces' Box promises),
// in random episodes: continuous, discrete and residual actions, from a tenth of the load to
// twenty times it (overload, queues that grow without end), scale-up delays from none to
// several intervals, random actions.
TEST(ScalingEnvTest, EveryObservationLiesInItsFeaturesBounds) {
  auto f = make_fixture(300);
  engine::Rng rng(17);
  const std::array<configs::ActionKind, 3> kinds = {configs::ActionKind::kContinuous, configs::ActionKind::kDiscrete,
                                                    configs::ActionKind::kResidual};
  std::size_t checked = 0, at_high = 0;
  for (int trial = 0; trial < 9; ++trial) {
    configs::ScenarioConfig config = f.config;
    config.rl->action = kinds[static_cast<std::size_t>(trial) % kinds.size()];
    if (config.rl->action == configs::ActionKind::kResidual) {
      autoscale::TargetTrackingConfig base;
      base.metric = autoscale::TrackedMetric::kArrivalRate;
      base.target = 1.0;
      config.rl->residual_base = base;
    }
    config.scaling.manager.max_total_instances = 2 + static_cast<std::uint32_t>(rng.uniform_int(10));
    auto env = std::move(*ScalingEnv::create(config, catalog(), f.workload));
    const auto bounds = env->observation_bounds();
    const auto names = env->observation_names();
    ASSERT_EQ(bounds.size(), env->observation_size());
    std::vector<float> obs(env->observation_size());
    ResetOptions options;
    options.rate_scale = std::exp(std::log(0.1) + rng.uniform() * std::log(200.0));
    options.scale_up_delay_s = rng.uniform() * 120.0;
    options.start_instances = 1 + static_cast<std::uint32_t>(rng.uniform_int(2));
    env->reset(static_cast<std::uint64_t>(trial), obs, options);
    std::vector<float> action(env->action_size());
    for (std::uint32_t step = 0; step <= env->steps_per_episode(); ++step) {
      for (std::size_t i = 0; i < obs.size(); ++i) {
        const std::string where = "trial " + std::to_string(trial) + " step " + std::to_string(step) + " " + names[i];
        ASSERT_FALSE(std::isnan(obs[i])) << where;
        ASSERT_GE(obs[i], bounds[i].first) << where;
        ASSERT_LE(obs[i], bounds[i].second) << where;
        at_high += std::isfinite(bounds[i].second) && obs[i] == static_cast<float>(bounds[i].second);
        ++checked;
      }
      if (step == env->steps_per_episode()) break;
      for (float& a : action) {
        a = env->discrete_choices() > 0 ? static_cast<float>(rng.uniform_int(env->discrete_choices()))
                                        : static_cast<float>(rng.uniform() * 2.0 - 1.0);
      }
      env->step(action, obs);
    }
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(at_high, 0u);  // overload reaches the capped latencies and a full KV cache
}

// With classes of service each class has its own features after the global ones: the
// share of its requests that missed its own SLO, and its goodput. On one overloaded
// instance under vLLM's priority policy the high class misses far less than the low one,
// and every value stays in its bounds.
TEST(ScalingEnvTest, EachClassOfServiceHasItsOwnViolationsAndGoodput) {
  auto f = make_fixture(300);
  configs::ScenarioConfig config = f.config;
  metrics::ServiceClass chat{"chat", 0, config.replay.slo, 0.3, {}};
  metrics::ServiceClass batch{"batch", 1, config.replay.slo, 0.7, {}};
  batch.slo.ttft = SimTime::from_seconds(60);
  config.replay.classes = {chat, batch};
  config.workload.class_shares = {0.3, 0.7};
  auto& llm = std::get<configs::LlmServingSpec>(config.serving);
  llm.class_priorities = {0, 1};
  llm.vllm.policy = cluster::VllmPolicy::kPriority;
  const traces::SharedTrace requests = *traces::load_trace(**traces::open_workload(config.workload, config.seed));
  auto env = std::move(*ScalingEnv::create(config, catalog(), traces::in_memory(requests)));
  const auto names = env->observation_names();
  ASSERT_EQ(names.size(), env->observation_size());
  ASSERT_EQ(names.size(), observation_size(1) + 4);
  EXPECT_EQ(std::vector<std::string>(names.end() - 4, names.end()),
            (std::vector<std::string>{"chat.violations", "chat.goodput", "batch.violations", "batch.goodput"}));
  const auto bounds = env->observation_bounds();
  std::vector<float> obs(env->observation_size());
  ResetOptions options;
  options.rate_scale = 4.0;
  options.start_instances = 1;
  env->reset(1, obs, options);
  std::vector<float> hold(env->action_size(), 0.0f);
  double chat_missed = 0, batch_missed = 0;
  for (std::uint32_t step = 0; step < env->steps_per_episode(); ++step) {
    env->step(hold, obs);
    for (std::size_t i = 0; i < obs.size(); ++i) {
      ASSERT_GE(obs[i], bounds[i].first) << names[i];
      ASSERT_LE(obs[i], bounds[i].second) << names[i];
    }
    chat_missed += obs[obs.size() - 4];
    batch_missed += obs[obs.size() - 2];
  }
  EXPECT_LT(chat_missed, 0.5 * batch_missed) << "chat " << chat_missed << ", batch " << batch_missed;
}

// Per pool: active, STARTING by time to ready, draining, requests and tokens per ACTIVE +
// STARTING, KV, waiting per ACTIVE.
TEST(ScalingEnvTest, StartingInstancesAreBinnedByTimeToReadyAndCountInTheLoadPerInstance) {
  auto f = make_fixture();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  const float up = 0.4f, hold = 0.0f;  // +2 instances, then nothing
  // With a 90 s delay, two scale-ups asked at 15 s are ready at 105 s: after the interval
  // (at 30 s) 75 s away (beyond four intervals), at 45 s 60 s away (within four), at 90 s
  // 15 s away (within one), ACTIVE at 105 s.
  env->reset(4, obs, delay_of(90.0));
  const std::vector<std::array<float, 4>> expected = {
      {4, 0, 0, 2}, {4, 0, 2, 0}, {4, 0, 2, 0}, {4, 0, 2, 0}, {4, 2, 0, 0}, {6, 0, 0, 0}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    env->step({i == 0 ? &up : &hold, 1}, obs);
    const auto at = [&](std::string_view name) { return obs[feature(*env, name)]; };
    EXPECT_EQ((std::array<float, 4>{at("mixed.active"), at("mixed.ready_soon"), at("mixed.ready_mid"),
                                    at("mixed.ready_late")}),
              expected[i])
        << "step " << i;
    const auto pool = env->run().scaling()->manager().view().snapshot(cluster::InstanceTag::kMixed);
    EXPECT_FLOAT_EQ(at("mixed.requests"), static_cast<float>(std::log1p(static_cast<double>(pool.active_requests) / 6.0)));
    EXPECT_FLOAT_EQ(at("mixed.tokens"),
                    static_cast<float>(std::log1p(static_cast<double>(pool.pending_tokens) / 6.0 / 1000.0)));
  }
}

TEST(ScalingEnvTest, TheFirstObservationHoldsTheWarmUpsRatesAndLatencies) {
  auto f = make_fixture();
  f.config.rl->warmup = SimTime::from_seconds(60);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  const std::size_t arrivals = feature(*env, "arrivals"), rate_1m = feature(*env, "rate_1m"),
                    slope_1m = feature(*env, "slope_1m"), ttft_p50 = feature(*env, "ttft_p50");
  std::vector<float> obs(env->observation_size());
  const EnvInfo info = env->reset(3, obs, window_at(600.0));
  std::uint64_t in_warmup = 0;
  for (const auto& request : *f.requests) {
    in_warmup += request.arrival >= SimTime::from_seconds(600) && request.arrival < SimTime::from_seconds(660);
  }
  EXPECT_FLOAT_EQ(obs[arrivals], static_cast<float>(std::log1p(static_cast<double>(in_warmup) / 60.0)));
  EXPECT_EQ(obs[rate_1m], obs[arrivals]);  // the averages start at the warm-up's rate
  EXPECT_EQ(obs[slope_1m], 0.0f);
  EXPECT_GT(info.left, 0u);
  EXPECT_GT(obs[ttft_p50], 0.0f);
  // Warm-up time costs nothing in the episode's GPU-hours.
  const float hold = 0.0f;
  const StepResult r = env->step({&hold, 1}, obs);
  EXPECT_NEAR(r.info.gpu_hours, 15.0 / 3600.0 * 4 * 4, 1e-9);
}

// The work features read the episode's own requests: the mean prompt of the last
// minute's arrivals and five minutes', the outputs of those that completed.
TEST(ScalingEnvTest, TheWorkFeaturesShowTheLengthsOfTheRecentRequests) {
  auto f = make_fixture();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  const std::size_t prompt_1m = feature(*env, "prompt_1m"), prompt_5m = feature(*env, "prompt_5m"),
                    output_5m = feature(*env, "output_5m"), burst_5m = feature(*env, "burst_5m");
  std::vector<float> obs(env->observation_size());
  env->reset(3, obs, window_at(1200.0));
  const float hold = std::numeric_limits<float>::quiet_NaN();
  for (int i = 0; i < 30; ++i) env->step({&hold, 1}, obs);  // to 465 s into the episode
  const auto mean_prompt = [&](double from_s, double to_s) {
    double sum = 0, n = 0;
    for (const auto& r : *f.requests) {
      if (r.arrival >= SimTime::from_seconds(1200 + from_s) && r.arrival <= SimTime::from_seconds(1200 + to_s)) {
        sum += r.prompt_tokens;
        ++n;
      }
    }
    return sum / n;
  };
  EXPECT_NEAR(obs[prompt_1m], std::log1p(mean_prompt(405, 465) / 1000), 1e-5);
  EXPECT_NEAR(obs[prompt_5m], std::log1p(mean_prompt(165, 465) / 1000), 1e-5);
  EXPECT_GT(obs[output_5m], 0.0f);
  EXPECT_GT(obs[burst_5m], std::log1p(0.5));  // the generator's arrivals are about Poisson or burstier
}

TEST(ScalingEnvTest, EachEpisodeDrawsItsStartSizeAllActiveFromTheStart) {
  auto f = make_fixture();
  f.config.rl->start_instances = {1, 7};
  f.config.scaling.manager.scale_up_delay = SimTime::from_seconds(40);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  std::set<std::uint32_t> seen;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const EnvInfo info = env->reset(seed, obs);
    seen.insert(info.active);
    ASSERT_TRUE(info.active == 1 || info.active == 7) << info.active;
    EXPECT_EQ(info.starting, 0u);  // no scale-up delay for the start
    const float hold = 0.0f;
    const StepResult r = env->step({&hold, 1}, obs);
    EXPECT_NEAR(r.info.mean_instances, info.active, 1e-9);
  }
  EXPECT_EQ(seen.size(), 2u);
  // Evaluation fixes the start.
  ResetOptions three;
  three.start_instances = 3;
  EXPECT_EQ(env->reset(3, obs, three).active, 3u);
  // A start the cluster's limit refuses fails when the environment is made, naming the key.
  f.config.rl->start_instances = {2, 40};
  f.config.scaling.manager.max_total_instances = 32;
  const auto refused = ScalingEnv::create(f.config, catalog(), f.workload);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("rl.start_instances"), std::string::npos) << refused.error().message;
}

TEST(ScalingEnvTest, PhaseFeaturesFollowTheWorkloadClockOverTheGivenPeriod) {
  auto f = make_fixture();
  f.config.rl->warmup = SimTime::from_seconds(15);
  for (const double period : {86'400.0, 7'200.0, 0.0}) {
    f.config.rl->phase_period_s = period;
    auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
    const std::size_t phase_sin = feature(*env, "phase_sin"), phase_cos = feature(*env, "phase_cos");
    std::vector<float> obs(env->observation_size());
    env->reset(2, obs, window_at(5400.0));  // the first decision comes after 15 s of warm-up
    const auto expect_at = [&](double workload_s) {
      const double angle = period > 0 ? 2 * std::numbers::pi * workload_s / period : 0.0;
      EXPECT_NEAR(obs[phase_sin], period > 0 ? std::sin(angle) : 0.0, 1e-5) << period;
      EXPECT_NEAR(obs[phase_cos], period > 0 ? std::cos(angle) : 0.0, 1e-5) << period;
    };
    expect_at(5415.0);
    const float hold = 0.0f;
    env->step({&hold, 1}, obs);
    expect_at(5430.0);
  }
}

TEST(ScalingEnvTest, DiscreteChoicesAreChangesFromMinusKToK) {
  auto f = make_fixture();
  f.config.rl->action = configs::ActionKind::kDiscrete;
  f.config.rl->discrete_max_step = 2;
  f.config.scaling.manager.scale_up_delay = SimTime::zero();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  EXPECT_EQ(env->discrete_choices(), 5u);
  std::vector<float> obs(env->observation_size());
  env->reset(1, obs);
  const float keep = 2.0f, add_two = 4.0f, drop_one = 1.0f;
  EXPECT_EQ(env->step({&keep, 1}, obs).info.active, 4u);
  EXPECT_EQ(env->step({&add_two, 1}, obs).info.active, 6u);
  const StepResult r = env->step({&drop_one, 1}, obs);
  EXPECT_EQ(r.info.scale_downs, 1u);
}

TEST(ScalingEnvTest, TargetChoicesAreSizesApproachedAtMostTheMaxStepADecision) {
  auto f = make_fixture();
  f.config.rl->action = configs::ActionKind::kTarget;
  f.config.rl->target_max_instances = 12;
  f.config.rl->target_max_step = 3;
  f.config.scaling.manager.scale_up_delay = SimTime::zero();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  EXPECT_EQ(env->discrete_choices(), 13u);  // 0..12
  std::vector<float> obs(env->observation_size());
  env->reset(1, obs);  // 4 instances
  const auto size_after = [&](float choice) {
    const StepResult r = env->step({&choice, 1}, obs);
    return r.info.active + r.info.starting;
  };
  EXPECT_EQ(size_after(9.0f), 7u);   // +3, the most a decision moves
  EXPECT_EQ(size_after(9.0f), 9u);   // there
  EXPECT_EQ(size_after(9.0f), 9u);   // holding the target is no action
  EXPECT_EQ(size_after(40.0f), 12u);  // clipped to target_max_instances
  EXPECT_EQ(size_after(std::numeric_limits<float>::quiet_NaN()), 12u);  // NaN keeps the size
  EXPECT_EQ(size_after(0.0f), 9u);   // down by 3; the pool never goes under its minimum
  EXPECT_EQ(size_after(0.0f), 6u);
  EXPECT_EQ(size_after(0.0f), 3u);
  EXPECT_EQ(size_after(0.0f), 1u);
  // Split prompt and token pools have a migration entry, which a target cannot express.
  std::get<configs::LlmServingSpec>(f.config.serving).start_state = {{cluster::InstanceTag::kPrompt, 2},
                                                                     {cluster::InstanceTag::kToken, 2}};
  const auto refused = ScalingEnv::create(f.config, catalog(), f.workload);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("rl.action: target"), std::string::npos) << refused.error().message;
}

// Residual choices correct a target tracking's size: the middle choice is exactly the
// baseline's play, the same autoscaler run by the scenario (a differential
// check against it), and choice c holds the baseline's size plus c - k at every decision.
TEST(ScalingEnvTest, ResidualChoicesCorrectTheTargetTrackingBaseline) {
  auto f = make_fixture(1800);
  f.config.scaling.manager.scale_up_delay = SimTime::from_seconds(30);
  autoscale::TargetTrackingConfig base;
  base.metric = autoscale::TrackedMetric::kArrivalRate;
  base.target = 1.0;
  f.config.rl->residual_base = base;
  configs::ScenarioConfig residual = f.config;
  residual.rl->action = configs::ActionKind::kResidual;
  residual.rl->discrete_max_step = 2;
  auto env = std::move(*ScalingEnv::create(residual, catalog(), f.workload));
  EXPECT_EQ(env->discrete_choices(), 5u);
  EXPECT_EQ(env->neutral_choice(), 2);
  EXPECT_EQ(env->observation_size(), observation_size(1) + 2);
  EXPECT_EQ(env->observation_names()[kPoolFeatures], "mixed.baseline");
  EXPECT_EQ(env->observation_names()[kPoolFeatures + 1], "mixed.baseline_need");

  // The scenario's own target tracking, as evaluation plays it (warm, to the limit).
  configs::ScenarioConfig tracking = f.config;
  tracking.autoscaler.policy = configs::AutoscalerPolicy::kTargetTracking;
  tracking.autoscaler.target_tracking = base;
  tracking.autoscaler.target_tracking.warm_start = true;
  tracking.autoscaler.target_tracking.max_instances = tracking.scaling.manager.max_total_instances;
  auto autoscaled = std::move(*ScalingEnv::create(tracking, catalog(), f.workload, true));
  std::vector<float> obs(env->observation_size()), other(autoscaled->observation_size());
  env->reset(1, obs, window_at(600));
  autoscaled->reset(1, other, window_at(600));
  const float middle = 2.0f, nan = std::numeric_limits<float>::quiet_NaN();
  bool changed = false;
  for (std::uint32_t step = 0; step < env->steps_per_episode(); ++step) {
    const StepResult a = env->step({&middle, 1}, obs);
    const StepResult b = autoscaled->step({&nan, 1}, other);
    // The autoscaler's decision at an interval's end is made inside it, the residual's at
    // the next step's start: the same instant, so every interval holds the same instances,
    // costs the same and serves the same requests.
    ASSERT_DOUBLE_EQ(a.info.mean_instances, b.info.mean_instances) << "step " << step;
    ASSERT_DOUBLE_EQ(a.info.gpu_hours, b.info.gpu_hours) << "step " << step;
    ASSERT_EQ(a.info.slo_met, b.info.slo_met) << "step " << step;
    changed = changed || a.info.scale_ups + a.info.scale_downs > 0;
  }
  EXPECT_TRUE(changed) << "the baseline scaled in the window";

  // Choice c: the baseline's size (the observation's feature) plus c - 2; NaN keeps the
  // size, as for every action kind (evaluation plays static sizes with NaN actions).
  env->reset(2, obs, window_at(600));
  const std::size_t at = feature(*env, "mixed.baseline");
  const std::size_t need = feature(*env, "mixed.baseline_need");
  for (const float choice : {4.0f, 3.0f, 0.0f, 1.0f}) {
    // The baseline's rate over the interval / target (1 request/s) x ACTIVE: the
    // interval's arrivals, give or take the one on its boundary (the baseline counts the
    // pool's arrivals at its look, the environment the system's over the interval).
    EXPECT_NEAR(obs[need], std::expm1(obs[feature(*env, "arrivals")]), 1.0 / 15 + 1e-3);
    const auto wanted = static_cast<std::int64_t>(obs[at]) + static_cast<std::int64_t>(choice) - 2;
    const StepResult r = env->step({&choice, 1}, obs);
    EXPECT_EQ(static_cast<std::int64_t>(r.info.active + r.info.starting), std::max<std::int64_t>(1, wanted));
  }
  for (int step = 0; step < 10; ++step) {
    const StepResult r = env->step({&nan, 1}, obs);
    EXPECT_EQ(r.info.scale_ups + r.info.scale_downs, 0u);
  }
  // A prompt and a token pool have a migration entry, which a residual cannot express.
  std::get<configs::LlmServingSpec>(residual.serving).start_state = {{cluster::InstanceTag::kPrompt, 2},
                                                                     {cluster::InstanceTag::kToken, 2}};
  const auto refused = ScalingEnv::create(residual, catalog(), f.workload);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("rl.action: residual"), std::string::npos) << refused.error().message;
}

// Split prompt and token pools: a third action entry moves instances between them
// (continuous: times action_mig_step; positive prompt -> token), counted as churn.
TEST(ScalingEnvTest, TheMigrationEntryMovesInstancesBetweenPromptAndToken) {
  auto f = make_fixture();
  std::get<configs::LlmServingSpec>(f.config.serving).start_state = {{cluster::InstanceTag::kPrompt, 4},
                                                                     {cluster::InstanceTag::kToken, 2}};
  f.config.rl->action_mig_step = 3;
  f.config.rl->reward.churn_weight = 0.5;
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  ASSERT_EQ(env->action_size(), 3u);
  std::vector<float> obs(env->observation_size());
  env->reset(1, obs);
  const auto& manager = env->run().scaling()->manager();
  // 2/3 of action_mig_step: two prompt instances become token instances within the interval.
  const std::vector<float> to_token = {0.0f, 0.0f, 2.0f / 3.0f};
  StepResult r = env->step(to_token, obs);
  EXPECT_EQ(r.info.migrations, 2u);
  EXPECT_EQ(r.info.scale_ups + r.info.scale_downs, 0u);
  EXPECT_DOUBLE_EQ(r.info.churn_penalty, 0.5 * 2);
  EXPECT_EQ(manager.view().count(cluster::InstanceTag::kPrompt, cluster::InstanceState::kActive), 2u);
  EXPECT_EQ(manager.view().count(cluster::InstanceTag::kToken, cluster::InstanceState::kActive), 4u);
  EXPECT_EQ(r.info.active, 6u);
  // Back the other way, past the prompt pool's minimum: -1 asks for three, all three move.
  const std::vector<float> to_prompt = {0.0f, 0.0f, -1.0f};
  r = env->step(to_prompt, obs);
  EXPECT_EQ(r.info.migrations, 3u);
  EXPECT_EQ(manager.view().count(cluster::InstanceTag::kToken, cluster::InstanceState::kActive), 1u);
  // The token pool keeps its minimum: the next move is blocked, never an error.
  r = env->step(to_prompt, obs);
  EXPECT_EQ(r.info.migrations, 0u);
  EXPECT_EQ(r.info.blocked, 1u);
  // A mixed pool has no migration entry.
  auto mixed = std::move(*ScalingEnv::create(make_fixture().config, catalog(), f.workload));
  EXPECT_EQ(mixed->action_size(), 1u);
}

// Under overload (one instance at 8x the rate) misses and a late backlog build up; the
// reward counts each miss against the workload's mean requests per interval and prices
// every request still waiting past the TTFT target (rl/env/reward.hpp).
TEST(ScalingEnvTest, TheRewardCountsMissesAgainstTheMeanLoadAndPricesTheLateBacklog) {
  auto f = make_fixture();
  f.config.rl->rate_scales = {8.0};
  f.config.rl->start_instances = {1};
  f.config.scaling.manager.max_total_instances = 4;
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  env->reset(6, obs);
  const double reference = static_cast<double>(f.requests->size()) / f.requests->back().arrival.seconds() * 15.0;
  const double ttft = f.config.replay.slo.ttft.seconds();
  const float hold = -1.0f;  // stays at one instance
  double most_late = 0.0;
  for (int i = 0; i < 12; ++i) {
    const StepResult r = env->step({&hold, 1}, obs);
    const double end = r.info.sim_seconds;
    double late = 0.0;
    env->run().replay().serving().for_each_in_flight([&](const metrics::RequestRecord& record) {
      if (!record.first_token) late += late_share(record.arrival.seconds(), end - 15.0, end, ttft);
    });
    EXPECT_DOUBLE_EQ(r.info.late_waiting, late);
    EXPECT_NEAR(r.info.slo_penalty, static_cast<double>(r.info.left - r.info.slo_met) / reference, 1e-12);
    EXPECT_NEAR(r.info.waiting_penalty, late / reference, 1e-12);
    EXPECT_DOUBLE_EQ(r.reward, -(r.info.slo_penalty + r.info.waiting_penalty + r.info.cost_penalty + r.info.churn_penalty));
    most_late = std::max(most_late, late);
  }
  EXPECT_GT(most_late, 5.0);  // the backlog built: more than five requests late all interval
}

// The default reward must make both extremes score badly: a sensible fixed size beats
// "always max" (paying for 100 instances) and "always min" (one instance, SLO missed). At
// 4x the default workload's rate one instance of the default deployment cannot keep up.
TEST(ScalingEnvTest, AlwaysMaxAndAlwaysMinBothScoreWorseThanAModerateSize) {
  auto f = make_fixture(/*episode_s=*/900);
  f.config.rl->rate_scales = {4.0};
  f.config.scaling.manager.scale_up_delay = SimTime::from_seconds(10);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  // A policy that steers the pool to `target` instances.
  const auto episode_return = [&](std::uint32_t target) {
    double total = 0.0;
    env->reset(11, obs);
    for (std::uint32_t i = 0; i < env->steps_per_episode(); ++i) {
      const auto& manager = env->run().scaling()->manager();
      const double current = manager.view().snapshot(cluster::InstanceTag::kMixed).current();
      const float action = static_cast<float>(std::clamp((target - current) / 5.0, -1.0, 1.0));
      total += env->step({&action, 1}, obs).reward;
    }
    return total;
  };
  const double always_min = episode_return(1);
  const double moderate = episode_return(4);
  const double always_max = episode_return(100);
  EXPECT_GT(moderate, always_min);
  EXPECT_GT(moderate, always_max);
}

// A window whose requests are all served early (or that holds none) still runs to its
// end: the agent keeps acting and the instances keep costing. (Scaling after the workload
// was served used to throw: the replay stopped the simulation.)
TEST(ScalingEnvTest, AnEpisodeOutlivesItsWorkload) {
  auto f = make_fixture(/*episode_s=*/300);
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  const float up = 0.2f, down = -0.2f;
  // The last 20 s of the workload (served within the first intervals), then past its end
  // (no request at all).
  for (const double start : {f.requests->back().arrival.seconds() - 20.0, 1e6}) {
    std::uint64_t left = env->reset(5, obs, window_at(start)).left;  // during the warm-up
    StepResult r;
    for (std::uint32_t i = 0; i < env->steps_per_episode(); ++i) {
      r = env->step({i % 2 == 0 ? &up : &down, 1}, obs);
      left += r.info.left;
      EXPECT_GT(r.info.mean_instances, 0.9);
    }
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(left, env->run().replay().metrics().counts().arrived);
    EXPECT_NEAR(r.info.gpu_hours, 300.0 / 3600.0 * 4 * 4, 300.0 / 3600.0 * 4 * 2);
  }
  // A window without requests where the agent changes nothing: the simulation has no
  // event at all, and the episode still plays out to its end (the replay used to take
  // this for requests stuck forever and throw).
  const float hold = std::numeric_limits<float>::quiet_NaN();
  env->reset(5, obs, window_at(1e6));
  StepResult r;
  for (std::uint32_t i = 0; i < env->steps_per_episode(); ++i) r = env->step({&hold, 1}, obs);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(env->run().replay().metrics().counts().arrived, 0u);
  EXPECT_DOUBLE_EQ(r.info.slo_attainment, 1.0);
  EXPECT_NEAR(r.info.gpu_hours, 300.0 / 3600.0 * 4 * 4, 1e-9);  // the 4 start instances, all along
}

TEST(ScalingEnvTest, WindowsPastTheWorkloadAreRefused) {
  auto f = make_fixture();
  f.config.rl->windows_to_s = 1e6;
  const auto env = ScalingEnv::create(f.config, catalog(), f.workload);
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().message.find("rl.windows_to_s (1000000.000000 s) is past the workload's last request"),
            std::string::npos)
      << env.error().message;
}

TEST(ScalingEnvTest, NanActionsChangeNothing) {
  auto f = make_fixture();
  auto env = std::move(*ScalingEnv::create(f.config, catalog(), f.workload));
  std::vector<float> obs(env->observation_size());
  env->reset(2, obs);
  const float nan = std::nanf("");
  const StepResult r = env->step({&nan, 1}, obs);
  EXPECT_EQ(r.info.scale_ups + r.info.scale_downs, 0u);
  EXPECT_TRUE(std::isfinite(r.reward));
}

TEST(ScalingEnvTest, ANonLlmScenarioIsRefused) {
  auto f = make_fixture();
  f.config.serving = cluster::FixedLatencyConfig{};
  const auto env = ScalingEnv::create(f.config, catalog(), f.workload);
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().message.find("llm"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::rl
