// The scheduler's state file reader on hand-edited numbers: every number in a real state
// file, replaced by values that do not fit some field (negative, past 32 or 64 bits,
// fractional, huge), is read as written (saving again gives it back), refused with an
// error naming its key, or, for a figure the file only reports (running_tasks, derived
// from the tasks), ignored. Nothing wraps or rounds on the way in.
#include "tools/cli/state_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/cli/scenario_command.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A state file mid-way through R1 (pools, placement groups, running and preempted tasks).
std::string saved_r1_state(const fs::path& dir) {
  json script = json::parse(std::ifstream(fs::path(MESHSIM_SOURCE_DIR) / "experiments/scenarios/r1_rlhf_pg_pool.json"));
  json steps = json::array();
  for (std::size_t i = 0; i < 12; ++i) {
    script["steps"][i].erase("expect");
    steps.push_back(script["steps"][i]);
  }
  const std::string state = (dir / "saved.json").string();
  steps.push_back({{"call", "execute_preemption"}, {"args", {{"task_id", "rollout-00"}, {"agent_name", "rollout-00"}}}});
  steps.push_back({{"call", "save_state"}, {"args", {{"path", state}}}});
  std::ofstream(dir / "script.json") << json{{"steps", steps}}.dump();
  std::ostringstream out, err;
  EXPECT_EQ(run_scenario_command({(dir / "script.json").string(), true, "", true}, out, err), 0) << err.str();
  return state;
}

// Every number leaf: its JSON pointer and its path as the reader's errors write it.
void number_leaves(const json& node, const std::string& pointer, const std::string& path,
                   std::vector<std::pair<std::string, std::string>>& out) {
  if (node.is_number()) out.emplace_back(pointer, path);
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      number_leaves(*it, pointer + "/" + it.key(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      number_leaves(node[i], pointer + "/" + std::to_string(i), path + "[" + std::to_string(i) + "]", out);
    }
  }
}

// The tree with every number as a double and every list sorted: a value edited into a
// map key may move its entry within a list when written back.
json canonical(const json& node) {
  if (node.is_number()) return node.get<double>();
  if (node.is_object()) {
    json out = json::object();
    for (auto it = node.begin(); it != node.end(); ++it) out[it.key()] = canonical(*it);
    return out;
  }
  if (!node.is_array()) return node;
  std::vector<std::string> items;
  for (const auto& item : node) items.push_back(canonical(item).dump());
  std::sort(items.begin(), items.end());
  json out = json::array();
  for (const auto& item : items) out.push_back(json::parse(item));
  return out;
}

TEST(StateFileTest, EveryNumberReadsAsWrittenOrIsRefusedNamingItsKey) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_numbers";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json saved = json::parse(std::ifstream(saved_r1_state(dir)));
  std::vector<std::pair<std::string, std::string>> leaves;
  number_leaves(saved, "", "", leaves);
  ASSERT_GT(leaves.size(), 100u);  // a rich state, so that every kind of field is tried

  const std::string edited = (dir / "edited.json").string(), written = (dir / "written.json").string();
  const std::vector<json> unfit = {json(-1), json(4294967296), json(std::numeric_limits<std::uint64_t>::max()),
                                   json(std::numeric_limits<std::int64_t>::min()), json(2.5), json(1e300)};
  std::size_t read = 0, refused = 0, ignored = 0;
  for (const auto& [pointer, path] : leaves) {
    for (const json& value : unfit) {
      json state = saved;
      state[json::json_pointer(pointer)] = value;
      std::ofstream(edited) << state.dump();
      const auto loaded = read_state_file(edited);
      if (!loaded) {
        ++refused;
        EXPECT_NE(loaded.error().message.find(path), std::string::npos)
            << path << " = " << value << ": " << loaded.error().message;
        continue;
      }
      ASSERT_TRUE(write_state_file(written, *loaded));
      const json again = canonical(json::parse(std::ifstream(written)));
      if (again == canonical(saved)) {
        ++ignored;
      } else {
        ++read;
        EXPECT_TRUE(again == canonical(state)) << path << " = " << value << " was not read as written";
      }
    }
  }
  // Both outcomes occur: fractional and negative values fit some fields (durations,
  // priorities) and not others (counters, indices).
  EXPECT_GT(read, 0u);
  EXPECT_GT(refused, 0u);
  EXPECT_LT(ignored, unfit.size() * 2);  // at most a derived figure or two
}

TEST(StateFileTest, ANegativeCounterIsRefusedWithItsKey) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_counter";
  fs::remove_all(dir);
  fs::create_directories(dir);
  json state = json::parse(std::ifstream(saved_r1_state(dir)));
  state["stats"]["total_preemptions"] = -1;
  std::ofstream(dir / "edited.json") << state.dump();
  const auto loaded = read_state_file((dir / "edited.json").string());
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("edited.json: stats.total_preemptions: expected an integer in [0, "),
            std::string::npos)
      << loaded.error().message;
}

}  // namespace
}  // namespace meshsim::cli
