// FolderLock: one writer per output folder (the cross-process case is
// tests/tools/one_writer_test.sh, which holds a folder from another process).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "tests/test_paths.hpp"
#include "tools/cli/capacity_command.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/compare_presets.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/cli/sweep_command.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("meshsim_lock_" + name);
  fs::remove_all(dir);
  return dir;
}

// A command run in a checkout writes its default folder there: git must not list it.
// (train and eval, built with LibTorch, write meshsim-train/ and meshsim-eval/.)
TEST(OutputFolderTest, EveryDefaultOutputFolderIsIgnoredByGit) {
  std::ifstream file(fs::path(MESHSIM_SOURCE_DIR) / ".gitignore");
  std::stringstream ignored;
  ignored << file.rdbuf();
  for (const std::string& folder : {ReplayCommandOptions{}.out_dir, CapacityCommandOptions{}.out_dir,
                                    ComparePresetsOptions{}.out_dir, SweepCommandOptions{}.out_dir,
                                    std::string("meshsim-train"), std::string("meshsim-eval"), std::string("runs")}) {
    EXPECT_NE(ignored.str().find("\n/" + folder + "/\n"), std::string::npos) << folder << " is not in .gitignore";
  }
}

// One command kind per folder: a folder holding any of a command's outputs is refused to
// every other command (naming it) and taken by the same command (a rerun or resume).
TEST(FolderLockTest, AFolderHoldingAnotherCommandsOutputsIsRefusedNamingThem) {
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"meshsim replay", "summary.json"},        {"meshsim replay", "requests.csv"},
      {"meshsim sweep", "sweep.json"},           {"meshsim sweep", "sweep.csv"},
      {"meshsim compare-presets", "presets.csv"}, {"meshsim capacity", "capacity.csv"},
      {"meshsim train", "learning_curve.csv"},   {"meshsim train", "checkpoint"},
      {"meshsim eval", "eval.csv"},              {"meshsim eval", "verdicts.csv"}};
  for (const auto& [holder, file] : outputs) {
    const fs::path dir = fresh_dir("kinds");
    fs::create_directories(dir);
    if (file == "checkpoint") {
      fs::create_directories(dir / file);
    } else {
      std::ofstream(dir / file) << "x";
    }
    for (const auto& [command, unused] : outputs) {
      const auto lock = FolderLock::acquire(dir.string(), command);
      if (command == holder) {
        EXPECT_TRUE(lock) << command << " on its own " << file << ": " << lock.error().message;
      } else {
        ASSERT_FALSE(lock) << command << " took a folder holding " << holder << "'s " << file;
        EXPECT_NE(lock.error().message.find("holds the outputs of " + holder + " (" + file + ")"), std::string::npos)
            << lock.error().message;
      }
    }
    EXPECT_FALSE(fs::exists(dir / FolderLock::kFileName)) << "a refused command leaves no lock file";
  }
  // End to end: compare-presets into a replay's folder exits 3 and leaves it as it was.
  const fs::path run = fresh_dir("kinds_replay");
  ReplayCommandOptions replay;
  replay.out_dir = run.string();
  replay.until_s = 60;
  replay.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(replay, out, err), kExitOk) << err.str();
  const auto before = std::distance(fs::directory_iterator(run), fs::directory_iterator());
  ComparePresetsOptions presets;
  presets.out_dir = run.string();
  presets.until_s = 60;
  presets.plot = false;
  EXPECT_EQ(run_compare_presets_command(presets, out, err), kExitOutputError);
  EXPECT_NE(err.str().find("holds the outputs of meshsim replay"), std::string::npos) << err.str();
  EXPECT_EQ(std::distance(fs::directory_iterator(run), fs::directory_iterator()), before);
}

TEST(FolderLockTest, ASecondWriterIsRefusedNamingTheFirstUntilItIsDone) {
  const fs::path dir = fresh_dir("two");
  {
    auto first = FolderLock::acquire(dir.string(), "meshsim sweep");
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_TRUE(fs::exists(dir / FolderLock::kFileName));
    auto second = FolderLock::acquire(dir.string(), "meshsim replay");
    ASSERT_FALSE(second);
    const std::string& message = second.error().message;
    EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
    EXPECT_NE(message.find("pid " + std::to_string(::getpid()) + ", meshsim sweep"), std::string::npos) << message;
    // Moved, it still holds.
    FolderLock moved = std::move(*first);
    EXPECT_FALSE(FolderLock::acquire(dir.string(), "meshsim replay"));
  }
  EXPECT_FALSE(fs::exists(dir / FolderLock::kFileName)) << "the lock file outlived its holder";
  EXPECT_TRUE(FolderLock::acquire(dir.string(), "meshsim replay"));
}

TEST(FolderLockTest, AStaleLockFileOfAHolderThatDiedDoesNotBlock) {
  const fs::path dir = fresh_dir("stale");
  fs::create_directories(dir);
  std::ofstream(dir / FolderLock::kFileName) << "pid 1, meshsim replay\n";  // killed with -9: no flock held
  auto lock = FolderLock::acquire(dir.string(), "meshsim replay");
  EXPECT_TRUE(lock) << lock.error().message;
}

// The holder's name is written into the lock file: a link there (to a file, a loop, a
// FIFO) is refused, and nothing outside the folder changes.
TEST(FolderLockTest, ALockFileThatIsALinkOrNotAFileIsRefusedAndNothingIsWrittenThroughIt) {
  const fs::path dir = fresh_dir("link");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "victim") << "precious\n";
  fs::create_symlink(dir / "victim", dir / "out" / FolderLock::kFileName);
  auto lock = FolderLock::acquire((dir / "out").string(), "meshsim replay");
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().message.find("lock file is a symbolic link: remove it"), std::string::npos)
      << lock.error().message;
  std::ifstream victim(dir / "victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "precious\n");
  EXPECT_TRUE(fs::is_symlink(dir / "out" / FolderLock::kFileName));

  const fs::path loop = fresh_dir("loop");
  fs::create_directories(loop);
  fs::create_symlink(FolderLock::kFileName, loop / FolderLock::kFileName);
  EXPECT_FALSE(FolderLock::acquire(loop.string(), "meshsim replay"));

  const fs::path fifo = fresh_dir("fifo");
  fs::create_directories(fifo);
  ASSERT_EQ(::mkfifo((fifo / FolderLock::kFileName).c_str(), 0644), 0);
  auto on_fifo = FolderLock::acquire(fifo.string(), "meshsim replay");
  ASSERT_FALSE(on_fifo);
  EXPECT_NE(on_fifo.error().message.find("not a regular file"), std::string::npos) << on_fifo.error().message;
}

// A command stopped by SIGTERM at any moment, also while it takes or gives up its folder,
// leaves no lock file: the file is registered for removal before it exists. A sweep under
// ASan once left one, SIGTERM having landed between creating the file and registering it.
// A child takes and gives up a folder in a loop until a signal at a random moment ends it.
TEST(FolderLockTest, ASignalAtAnyMomentOfTakingOrGivingUpAFolderLeavesNoLockFile) {
  const fs::path dir = fresh_dir("signal");
  const std::string folder = (dir / "out").string();
  std::mt19937 random(11);
  int left = 0;
  constexpr int kTries = 60;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (;;) (void)FolderLock::acquire(folder, "meshsim replay");
    }
    ::usleep(200 + random() % 2000);
    ::kill(child, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "the child did not die by SIGTERM";
    left += fs::exists(fs::path(folder) / FolderLock::kFileName) ? 1 : 0;
  }
  EXPECT_EQ(left, 0) << left << " of " << kTries << " signals left the lock file";
  fs::remove_all(dir);
}

TEST(FolderLockTest, AReplayIntoAHeldFolderExitsThreeAndWritesNothing) {
  const fs::path dir = fresh_dir("replay");
  auto held = FolderLock::acquire(dir.string(), "meshsim train");
  ASSERT_TRUE(held);
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.quiet = true;
  options.until_s = 30;
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitOutputError);
  EXPECT_NE(err.str().find("another command is writing this folder"), std::string::npos) << err.str();
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.path().filename() != FolderLock::kFileName;
  EXPECT_EQ(files, 0u);
}

}  // namespace
}  // namespace meshsim::cli
