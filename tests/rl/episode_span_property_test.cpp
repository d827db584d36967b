// Every episode ends, whatever its span: random windows (in the workload, in a gap of it,
// past its end), episode lengths, decision intervals, warm-ups, scale-up delays, rate
// scales and action kinds, played to their truncation with random actions, on a
// ServeGen workload with gaps and on every shipped recipe. A ServeGen window holding no
// request once failed the episode's source, finished the simulation, and the next
// scale-up stopped a shipped recipe's training with an internal check ("schedule_at:
// the simulation has finished").
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rl/env/scaling_env.hpp"
#include "sim/engine/rng.hpp"
#include "tests/rl/env_fixture.hpp"
#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "traces/servegen_source.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;

// Two ServeGen clients over 40 one-minute windows, none of them sending in windows 10 to
// 19 (a gap) and 32 to 39 (a quiet end).
std::string gapped_servegen_folder() {
  const fs::path folder = fs::temp_directory_path() / "meshsim_episode_spans";
  fs::remove_all(folder);
  fs::create_directories(folder);
  for (int client = 0; client < 2; ++client) {
    std::ofstream file(folder / ("chunk-" + std::to_string(client) + "-trace.csv"));
    for (int w = 0; w < 40; ++w) {
      const bool quiet = (w >= 10 && w < 20) || w >= 32;
      file << w * 60 << (quiet ? ",0,0,,0,0\n" : "," + std::to_string(0.5 + 0.5 * client) + ",1,Gamma,0.5,1\n");
    }
  }
  return folder.string();
}

traces::WorkloadSpec servegen_workload(const std::string& folder) {
  traces::ServeGenSpec spec;
  spec.path = folder;
  spec.lengths = traces::ServeGenLengths::kModel;
  spec.prompt_tokens = traces::LengthSpec{traces::LengthSpec::Kind::kUniform, 1, 20, 1500, {}};
  spec.output_tokens = traces::LengthSpec{traces::LengthSpec::Kind::kUniform, 1, 5, 300, {}};
  traces::WorkloadSpec workload;
  workload.source = spec;
  return workload;
}

// A valid random action for `env`.
std::vector<float> random_action(const ScalingEnv& env, const configs::RlSpec& spec, engine::Rng& rng) {
  std::vector<float> action(env.action_size());
  for (float& a : action) {
    if (rng.uniform() < 0.1) {
      a = std::nanf("");
    } else if (spec.action == configs::ActionKind::kContinuous) {
      a = static_cast<float>(2 * rng.uniform() - 1);
    } else {
      a = static_cast<float>(rng.uniform_int(env.discrete_choices()));
    }
  }
  return action;
}

// Plays one episode to its truncation; every request of the window is counted: judged as
// it left, refused for length, or still in flight.
void play_to_the_end(ScalingEnv& env, const configs::RlSpec& spec, const traces::EpisodeWorkload& workload,
                     const ResetOptions& options, engine::Rng& rng, const std::string& where) {
  std::vector<float> obs(env.observation_size());
  const EnvInfo start = env.reset(rng.next_u64(), obs, options);
  std::uint64_t left = start.left;
  StepResult r;
  for (std::uint32_t i = 0; i < env.steps_per_episode(); ++i) {
    r = env.step(random_action(env, spec, rng), obs);
    left += r.info.left;
    for (const float x : obs) ASSERT_TRUE(std::isfinite(x)) << where << ", step " << i;
    ASSERT_TRUE(std::isfinite(r.reward)) << where << ", step " << i;
    ASSERT_EQ(r.truncated, i + 1 == env.steps_per_episode()) << where << ", step " << i;
  }
  const auto& replay = env.run().replay();
  const auto& counts = replay.metrics().counts();
  EXPECT_EQ(left + replay.serving().in_flight() + counts.dropped_by(metrics::DropReason::kOverContext), counts.arrived)
      << where;
  // The episode played exactly the window's requests.
  const SimTime length = spec.warmup + SimTime::from_us(spec.decision_interval.us() * env.steps_per_episode());
  auto window = workload.window(SimTime::from_seconds(start.window_start_s), length, start.rate_scale);
  std::uint64_t in_window = 0;
  for (;;) {
    auto next = window->next();
    ASSERT_TRUE(next) << where << ": " << next.error().message;
    if (!next->has_value()) break;
    ++in_window;
  }
  EXPECT_EQ(counts.arrived, in_window) << where;
}

TEST(EpisodeSpanPropertyTest, EpisodesEndOverRandomSpansDelaysRateScalesAndActionKinds) {
  const std::string folder = gapped_servegen_folder();
  configs::ScenarioConfig base = *configs::load_scenario(configs::default_scenario_path());
  base.workload = servegen_workload(folder);
  auto workload = traces::open_episode_workload(base.workload, base.seed);
  ASSERT_TRUE(workload) << workload.error().message;
  engine::Rng rng(56);
  const configs::ActionKind kinds[] = {configs::ActionKind::kDiscrete, configs::ActionKind::kResidual,
                                       configs::ActionKind::kTarget, configs::ActionKind::kContinuous};
  int empty_episodes = 0;
  for (int trial = 0; trial < 48; ++trial) {
    configs::ScenarioConfig config = base;
    configs::RlSpec spec;
    spec.decision_interval = SimTime::from_seconds(std::vector{5.0, 15.0, 60.0}[rng.uniform_int(3)]);
    spec.episode_length = SimTime::from_seconds(30 + rng.uniform() * 600);
    spec.warmup = SimTime::from_seconds(rng.uniform() < 0.5 ? 0.0 : 15.0);
    spec.action = kinds[trial % 4];
    spec.scale_up_delays_s = {0, 10, 60, 180};
    spec.start_instances = {1, 2, 4};
    spec.windows_to_s = 1000;
    config.rl = spec;
    auto env = ScalingEnv::create(config, catalog(), *workload);
    ASSERT_TRUE(env) << env.error().message;
    ResetOptions options;
    // Anywhere from the first request to past the last, the gaps included.
    options.window_start_s = rng.uniform() * 2600;
    options.rate_scale = std::exp(std::log(0.1) + rng.uniform() * std::log(80.0));
    const std::string where = "trial " + std::to_string(trial) + " (window from " +
                              std::to_string(*options.window_start_s) + " s at rate x" +
                              std::to_string(*options.rate_scale) + ")";
    play_to_the_end(**env, spec, **workload, options, rng, where);
    empty_episodes += (*env)->run().replay().metrics().counts().arrived == 0;
  }
  // The draw reaches the gaps: some episodes hold no request at all.
  EXPECT_GT(empty_episodes, 2);
}

// Every shipped recipe plays episodes from its own windows, delays, rate scales and start
// sizes to the end, among them episodes that start in each gap of its trace (m-small's
// data has 40-minute holes in its training days), shortened to two minutes.
TEST(EpisodeSpanPropertyTest, EveryShippedRecipePlaysEpisodesToTheEndFromItsGapsToo) {
  const std::string recipes[] = {"configs/scenarios/rl-train.json", "experiments/rl/residual-recipe.json",
                                 "experiments/rl/servegen-recipe.json", "experiments/rl/servegen-m-large-recipe.json",
                                 "experiments/rl/servegen-both-recipe.json"};
  MESHSIM_NEED_SHARED_FILE(testing::shared_path("traces/servegen/m-small"));
  engine::Rng rng(8);
  int gap_episodes = 0;
  for (const std::string& recipe : recipes) {
    auto config = configs::load_scenario(std::string(MESHSIM_SOURCE_DIR) + "/" + recipe);
    ASSERT_TRUE(config) << config.error().message;
    auto workload = traces::open_episode_workload(config->workload, config->seed);
    ASSERT_TRUE(workload) << recipe << ": " << workload.error().message;
    configs::RlSpec spec = *config->rl;
    spec.episode_length = SimTime::from_seconds(120);
    config->rl = spec;
    auto env = ScalingEnv::create(*config, catalog(), *workload);
    ASSERT_TRUE(env) << recipe << ": " << env.error().message;
    const double last = spec.windows_to_s.value_or((*workload)->span_s() - 120);
    std::vector<double> starts;
    for (int i = 0; i < 3; ++i) starts.push_back(spec.windows_from_s + rng.uniform() * (last - spec.windows_from_s));
    if (const auto* servegen = std::get_if<traces::ServeGenSpec>(&config->workload.source)) {
      auto table = traces::load_servegen(servegen->path, servegen->lengths);
      ASSERT_TRUE(table) << table.error().message;
      for (double t = 0; t < last; t += (*table)->window_s) {
        if ((*table)->expected_requests(t, t + (*table)->window_s, servegen->load_scale) == 0) starts.push_back(t);
      }
    }
    for (const double start : starts) {
      ResetOptions options;
      options.window_start_s = start;
      play_to_the_end(**env, spec, **workload, options, rng, recipe + " from " + std::to_string(start) + " s");
      gap_episodes += (*env)->run().replay().metrics().counts().arrived == 0;
    }
  }
  EXPECT_GT(gap_episodes, 0);  // m-small's gaps were reached
}

}  // namespace
}  // namespace meshsim::rl
