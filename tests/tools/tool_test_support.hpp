#pragma once

// Helpers the command tests share: reading an output file, fresh folders for runs and
// scenario files.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// What a command printed and returned.
struct CommandRun {
  int code = 0;
  std::string out, err;
};

// Runs `command(options, out, err)` (a run_*_command) with plotting off where it plots.
template <typename Options, typename Command>
CommandRun run_command(Options options, Command command) {
  if constexpr (requires { options.plot; }) options.plot = false;
  std::ostringstream out, err;
  CommandRun run;
  run.code = command(options, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// The rows of a CSV with a header line, each as column -> cell (no quoting: the
// commands' CSVs have none).
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::map<std::string, std::string> row;
    std::size_t i = 0;
    for (std::string cell; i < header.size() && std::getline(fields, cell, ','); ++i) row[header[i]] = cell;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace meshsim::cli::testing
