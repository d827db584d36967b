#pragma once

// Helpers the command tests share: reading an output file, fresh folders for runs and
// scenario files.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace meshsim::cli::testing {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// An empty temporary folder for one test's outputs (removed first if left over).
inline fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("meshsim_test_" + name);
  fs::remove_all(dir);
  return dir;
}

// Writes `text` as a scenario file in a fresh folder; returns its path.
inline fs::path scenario_in_fresh_dir(const std::string& name, const std::string& file, const std::string& text) {
  const fs::path dir = fresh_dir(name);
  fs::create_directories(dir);
  std::ofstream(dir / file) << text;
  return dir / file;
}

}  // namespace meshsim::cli::testing
