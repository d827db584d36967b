// Checkpoint folders replaced without a gap: a save interrupted after any of its steps
// leaves a folder that recover_checkpoint turns into the newest complete checkpoint.
#include "rl/ppo/checkpoint_folder.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "tests/tools/tool_test_support.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;
using meshsim::cli::testing::fresh_dir;
using meshsim::cli::testing::slurp;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A complete checkpoint of version `version`.
void checkpoint_at(const fs::path& dir, const std::string& version) {
  write(dir / "policy.pt", version);
  write(dir / kCheckpointStateFile, version);
}

TEST(CheckpointFolderTest, ASaveInterruptedAfterAnyStepRecoversTheNewestCompleteCheckpoint) {
  // The steps of saving version B over version A, in the order PpoTrainer::save and
  // swap_in_checkpoint take them.
  const std::vector<std::function<void(const fs::path&)>> steps = {
      [](const fs::path& dir) { write(fresh_checkpoint(dir) / "policy.pt", "B"); },
      [](const fs::path& dir) { write(fresh_checkpoint(dir) / "optimizer.pt", "B"); },
      [](const fs::path& dir) { write(fresh_checkpoint(dir) / kCheckpointStateFile, "B"); },  // complete
      [](const fs::path& dir) { fs::rename(dir, dir.string() + ".old"); },
      [](const fs::path& dir) { fs::rename(fresh_checkpoint(dir), dir); },
      [](const fs::path& dir) { fs::remove_all(dir.string() + ".old"); },
  };
  for (std::size_t done = 0; done <= steps.size(); ++done) {
    const fs::path dir = fresh_dir("checkpoint_steps") / "checkpoint";
    checkpoint_at(dir, "A");
    for (std::size_t i = 0; i < done; ++i) steps[i](dir);
    ASSERT_TRUE(recover_checkpoint(dir)) << done;
    const std::string want = done >= 3 ? "B" : "A";
    EXPECT_EQ(slurp((dir / kCheckpointStateFile).string()), want) << "after " << done << " steps";
    EXPECT_EQ(slurp((dir / "policy.pt").string()), want) << "after " << done << " steps";
    EXPECT_FALSE(fs::exists(fresh_checkpoint(dir))) << done;
    EXPECT_FALSE(fs::exists(dir.string() + ".old")) << done;
  }
}

TEST(CheckpointFolderTest, SwapInReplacesAndCopyKeepsEveryFile) {
  const fs::path root = fresh_dir("checkpoint_swap");
  const fs::path dir = root / "checkpoint", best = root / "best";
  ASSERT_TRUE(recover_checkpoint(dir));  // nothing there: nothing to do
  EXPECT_FALSE(fs::exists(dir));
  checkpoint_at(fresh_checkpoint(dir), "A");
  ASSERT_TRUE(swap_in_checkpoint(dir));
  ASSERT_TRUE(copy_checkpoint(dir, best));
  checkpoint_at(fresh_checkpoint(dir), "B");
  ASSERT_TRUE(swap_in_checkpoint(dir));
  EXPECT_EQ(slurp((dir / "policy.pt").string()), "B");
  EXPECT_EQ(slurp((best / "policy.pt").string()), "A");
  EXPECT_TRUE(complete_checkpoint(best));
  ASSERT_TRUE(copy_checkpoint(dir, best));
  EXPECT_EQ(slurp((best / kCheckpointStateFile).string()), "B");
  EXPECT_FALSE(fs::exists(fresh_checkpoint(best)));
  EXPECT_FALSE(fs::exists(root / "best.old"));
}

}  // namespace
}  // namespace meshsim::rl
