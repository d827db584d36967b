// Same config, trace and seed give the same bytes, also when many runs share a process
// on several threads (sweeps and vectorised RL environments will do this): no state
// leaks between simulations. Run under ThreadSanitizer by tools/test.sh --tsan.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using testing::slurp;

// One replay of the default scenario with `seed` (and an autoscaler), or of the synthetic
// shared cluster (serving and batch jobs under the core), into `dir`; returns its three
// files.
std::string replay_into(const fs::path& dir, int seed, const std::string& autoscaler = "none") {
  fs::remove_all(dir);
  ReplayCommandOptions options;
  if (autoscaler == "shared") {
    options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json";
  }
  options.out_dir = dir.string();
  options.seed = std::to_string(seed);
  if (autoscaler != "shared") options.autoscaler = autoscaler;
  options.until_s = 900;
  options.quiet = true;
  std::ostringstream out, err;
  if (run_replay_command(options, out, err) != kExitOk) return "failed: " + err.str();
  return slurp(dir / "summary.json") + slurp(dir / "requests.csv") + slurp(dir / "timeseries.csv");
}

TEST(DeterminismTest, RunsOnSeveralThreadsGiveTheBytesOfSerialRuns) {
  // Runs 4 and 5 scale (instances come and go, decisions are events); 6 and 7 share the
  // cluster with batch jobs.
  constexpr int kRuns = 8;
  const auto policy = [](int i) {
    return i == 4 ? "target_tracking" : i == 5 ? "elastic" : i >= 6 ? "shared" : "none";
  };
  const fs::path base = fs::temp_directory_path() / "meshsim_determinism";
  std::vector<std::string> serial(kRuns), threaded(kRuns);
  for (int i = 0; i < kRuns; ++i) {
    serial[i] = replay_into(base / ("serial" + std::to_string(i)), 100 + i % 2, policy(i));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back(
        [&, i] { threaded[i] = replay_into(base / ("thread" + std::to_string(i)), 100 + i % 2, policy(i)); });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_EQ(serial[i].rfind("failed", 0), std::string::npos) << serial[i];
    EXPECT_TRUE(threaded[i] == serial[i]) << "run " << i << " differs on a thread";
  }
  EXPECT_TRUE(serial[0] == serial[2]);  // same seed
  EXPECT_FALSE(serial[0] == serial[1]);  // another seed
  EXPECT_FALSE(serial[4] == serial[0]);  // scaled
  EXPECT_FALSE(serial[6] == serial[7]);  // another seed: other serving requests and batch jobs
}

}  // namespace
}  // namespace meshsim::cli
