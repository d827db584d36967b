// Config-like files are read whole, so what is not a plain file of sane size is refused at
// once, naming the path (a config of /dev/zero read forever and grew to 4.3 GB before).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "configs/config_file.hpp"

namespace meshsim::configs {
namespace {

namespace fs = std::filesystem;

void expect_refused(const std::string& path, const std::string& why) {
  const auto read = read_config_file(path);
  ASSERT_FALSE(read) << path;
  EXPECT_NE(read.error().message.find(path), std::string::npos) << read.error().message;
  EXPECT_NE(read.error().message.find(why), std::string::npos) << read.error().message;
}

TEST(ConfigFileTest, DevicesPipesFoldersAndHugeFilesAreRefusedBeforeReading) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_config_file_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  expect_refused("/dev/zero", "not a regular file");
  expect_refused(dir.string(), "not a regular file");
  const fs::path pipe = dir / "pipe.json";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  expect_refused(pipe.string(), "not a regular file");  // opening it would wait for a writer
  const fs::path huge = dir / "huge.json";
  std::ofstream(huge).put('{');
  fs::resize_file(huge, kMaxConfigFileBytes + 1);  // sparse: nothing is written
  expect_refused(huge.string(), "holds at most 256 MiB");
  expect_refused((dir / "missing.json").string(), "cannot open");
  const fs::path fine = dir / "fine.json";
  std::ofstream(fine) << R"({"seed": 3})";
  const auto read = read_config_file(fine.string());
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ((*read)["seed"], 3);
  // Through a symlink, the file it names is what counts.
  fs::create_symlink(fine, dir / "link.json");
  EXPECT_TRUE(read_config_file((dir / "link.json").string()));
  fs::create_symlink("/dev/zero", dir / "zero.json");
  expect_refused((dir / "zero.json").string(), "not a regular file");
}

}  // namespace
}  // namespace meshsim::configs
