// The scheduler's state file reader on hand-edited numbers: every number in a real state
// file, replaced by values that do not fit some field (negative, past 32 or 64 bits,
// fractional, between two microseconds, huge), is read as written (saving again gives it back), refused with an
// error naming its key, or, for a figure the file only reports (running_tasks, derived
// from the tasks), ignored. Nothing wraps or rounds on the way in.
#include "tools/runs/state_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "tests/test_paths.hpp"
#include "tools/cli/commands.hpp"
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
                                   json(std::numeric_limits<std::int64_t>::min()), json(2.5), json(1e300),
                                   json(2.0000005)};  // a duration, not an instant on the core's clock
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

namespace meshsim::cli {
namespace {

// Every value of `node` with its JSON pointer (objects and arrays too).
void all_values(const json& node, const std::string& pointer, std::vector<std::string>& out) {
  out.push_back(pointer);
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) all_values(*it, pointer + "/" + it.key(), out);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) all_values(node[i], pointer + "/" + std::to_string(i), out);
  }
}

void strings_of(const json& node, std::vector<std::string>& out) {
  if (node.is_string()) out.push_back(node.get<std::string>());
  if (!node.is_structured()) return;  // a scalar iterates as itself
  for (const auto& child : node) strings_of(child, out);
}

// Load, check, then commit: a real state file edited at random (a number set to a small
// or nearby value, a name swapped for another name in the file, a list entry dropped or
// repeated, a key dropped) either is refused at load_state, or loads into a core whose
// invariants hold and which then completes every task, deletes every agent, places a new
// task and runs on, with no internal check failing and no invariant broken after any step.
TEST(StateFileTest, AMutatedStateIsRefusedOrLoadsIntoACoreThatKeepsWorking) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_state_mutations";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json saved = json::parse(std::ifstream(saved_r1_state(dir)));
  std::vector<std::string> names;
  strings_of(saved, names);
  const int cases = [] {
    const char* env = std::getenv("MESHSIM_PROPERTY_CASES");
    return env != nullptr ? std::max(1, std::atoi(env)) : 400;
  }();
  std::mt19937_64 rng(7);
  int loaded = 0;
  for (int c = 0; c < cases; ++c) {
    json state = saved;
    for (int edits = 1 + static_cast<int>(rng() % 2); edits > 0; --edits) {
      std::vector<std::string> pointers;
      all_values(state, "", pointers);
      const json::json_pointer at(pointers[1 + rng() % (pointers.size() - 1)]);
      json& value = state[at];
      if (value.is_boolean()) {
        value = !value.get<bool>();
      } else if (value.is_number()) {
        const std::int64_t picks[] = {0, 1, 2, 3, 5, 7, 99, value.get<std::int64_t>() + 1,
                                      std::max<std::int64_t>(0, value.get<std::int64_t>() - 1)};
        value = picks[rng() % std::size(picks)];
      } else if (value.is_string()) {
        value = names[rng() % names.size()];
      } else if (value.is_array() && !value.empty()) {
        const std::size_t i = rng() % value.size();
        if (rng() % 2 == 0) {
          value.erase(i);
        } else {
          value.push_back(value[i]);
        }
      } else if (value.is_object() && !value.empty() && rng() % 4 == 0) {
        auto it = value.begin();
        std::advance(it, static_cast<long>(rng() % value.size()));
        value.erase(it.key());
      }
    }
    const fs::path file = dir / "mutant.json";
    std::ofstream(file) << state.dump();
    json steps = json::array({{{"call", "load_state"}, {"args", {{"path", file.string()}}}}});
    if (state.contains("tasks") && state["tasks"].is_array()) {
      for (const auto& task : state["tasks"]) {
        if (task.is_object() && task.contains("id") && task["id"].is_string()) {
          steps.push_back({{"call", "complete"}, {"args", {{"task_id", task["id"]}}}});
        }
      }
    }
    if (state.contains("agents") && state["agents"].is_array()) {
      for (const auto& agent : state["agents"]) {
        if (agent.is_object() && agent.contains("name") && agent["name"].is_string()) {
          steps.push_back({{"call", "delete_agent"}, {"args", {{"name", agent["name"]}, {"force", true}}}});
        }
      }
    }
    steps.push_back({{"call", "submit_task_with_preemption"},
                     {"args", {{"task_id", "after-load"}, {"pool", "rlhf-pg-pool"}, {"actor_class", "Worker"},
                               {"resources", {{"cpu", 1}, {"memory", 100}}}, {"priority", 9}}}});
    steps.push_back({{"call", "advance"}, {"args", {{"seconds", 40}}}});
    steps.push_back({{"call", "stats"}, {"args", json::object()}});
    const fs::path script = dir / "script.json";
    std::ofstream(script) << json{{"steps", steps}}.dump();
    std::ostringstream out, err;
    int code = -1;
    try {
      code = run_scenario_command({script.string(), /*check=*/true, "", /*allow_files=*/true}, out, err);
    } catch (const std::exception& e) {
      FAIL() << "case " << c << ": " << e.what() << "\nstate: " << state.dump();
    }
    ASSERT_TRUE(code == kExitOk || code == kExitExpectationsUnmet)
        << "case " << c << " exit " << code << ": " << err.str() << "\nstate: " << state.dump();
    const json first = json::parse(out.str().substr(0, out.str().find('\n')));
    loaded += first["result"]["success"].get<bool>();
  }
  // The edits are small: some must load for the test to test the core after loading.
  EXPECT_GT(loaded, cases / 10);
}

}  // namespace
}  // namespace meshsim::cli

namespace meshsim::cli {
namespace {

// What load_state says of a state file holding `text` ("" when it loads).
std::string load_error(const fs::path& dir, const std::string& text) {
  const fs::path file = dir / "edited.json";
  std::ofstream(file) << text;
  const fs::path script = dir / "load.json";
  std::ofstream(script) << json{{"steps", {{{"call", "load_state"}, {"args", {{"path", file.string()}}}}}}}.dump();
  std::ostringstream out, err;
  const int code = run_scenario_command({script.string(), true, "", true}, out, err);
  if (code == kExitBadInput) return err.str();
  const json result = json::parse(out.str().substr(0, out.str().find('\n')))["result"];
  return result["success"].get<bool>() ? "" : result["error"].get<std::string>();
}

// The hand edits an adversarial trial loaded with success (each then broke a later call):
// each is refused at load, naming what is wrong.
TEST(StateFileTest, EachInconsistentEditIsRefusedAtLoadNamingIt) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_state_edits";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json saved = json::parse(std::ifstream(saved_r1_state(dir)));
  ASSERT_EQ(load_error(dir, saved.dump()), "");
  const auto edited = [&](const std::function<void(json&)>& edit) {
    json state = saved;
    edit(state);
    return load_error(dir, state.dump());
  };
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& s) { s["pending_placement_groups"] = {99}; }, "pending placement group 99 does not exist"},
      {[](json& s) { s["agents"][0]["node"] = 7; }, "is on node 7 of 1"},
      {[](json& s) { s["agents"][0]["bundle_index"] = 5; }, "is not on bundle 5 of placement group"},
      {[](json& s) { s["placement_groups"][0][1]["id"] = 42; }, "placement group 1 says its id is 42"},
      {[](json& s) { s["agents"][0]["last_heartbeat"] = s["saved_at"].get<double>() + 100; },
       "last heartbeat is after saved_at"},
      {[](json& s) { s["pg_pools"][0]["pool"] = "no-such-pool"; }, "PG pool no-such-pool belongs to no pool"},
      {[](json& s) { s["surprise"] = 1; }, "surprise: unknown key"},
      {[](json& s) { s["agents"][0]["colour"] = "blue"; }, "agents[0].colour: unknown key"},
  };
  for (const auto& [edit, expected] : cases) {
    const std::string error = edited(edit);
    EXPECT_NE(error.find(expected), std::string::npos) << expected << " not in: " << error;
  }
  EXPECT_NE(load_error(dir, "").find("empty, expected a state file written by save_state"), std::string::npos);
  EXPECT_NE(load_error(dir, "{}").find("missing key 'format'"), std::string::npos) << load_error(dir, "{}");
}

// Facts a state file repeats (a pooled placement group's in_use, a running task's pool)
// are derived again from the ones they follow from (which agent sits where, the agent's
// pool) and a file that disagrees is refused: loaded, the first would hand an occupied
// group to the next task, the second hide the task from preemption in a phantom pool.
TEST(StateFileTest, ARepeatedFactThatContradictsItsSourceIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_state_derived";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json saved = json::parse(std::ifstream(saved_r1_state(dir)));
  bool flipped = false;
  json state = saved;
  for (auto& pool : state["pg_pools"]) {
    for (auto& [id, entry] : pool["pgs"].items()) {
      if (!flipped && entry[1]["in_use"].get<bool>()) {
        entry[1]["in_use"] = false;
        flipped = true;
      }
    }
  }
  ASSERT_TRUE(flipped) << "the saved state has no placement group in use";
  EXPECT_NE(load_error(dir, state.dump()).find("is marked free but agent"), std::string::npos)
      << load_error(dir, state.dump());
  state = saved;
  for (auto& pool : state["pg_pools"]) {
    for (auto& [id, entry] : pool["pgs"].items()) {
      if (!entry[1]["in_use"].get<bool>()) entry[1]["in_use"] = true;
    }
  }
  if (state != saved) {
    EXPECT_NE(load_error(dir, state.dump()).find("is marked in use but no agent sits in it"), std::string::npos);
  }
  state = saved;
  const auto running = std::find_if(state["tasks"].begin(), state["tasks"].end(),
                                    [](const json& task) { return task["state"] == "running"; });
  ASSERT_NE(running, state["tasks"].end());
  (*running)["pool"] = "ghost";
  EXPECT_NE(load_error(dir, state.dump()).find("is in pool 'ghost' but its agent"), std::string::npos)
      << load_error(dir, state.dump());
}

// A value of the wrong type is named by its key, as a number that does not fit is: never
// the JSON library's message alone.
TEST(StateFileTest, AValueOfTheWrongTypeIsNamedByItsKey) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_state_types";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json saved = json::parse(std::ifstream(saved_r1_state(dir)));
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& s) { s["tasks"][0]["priority"] = "high"; }, "tasks[0].priority: expected a number"},
      {[](json& s) { s["tasks"][0]["pool"] = 3; }, "tasks[0].pool: type must be string"},
      {[](json& s) { s["kept_placement_groups"] = {{1, 2}}; }, "kept_placement_groups[0][1]: type must be string"},
      {[](json& s) { s["kept_placement_groups"] = 5; }, "kept_placement_groups: type must be array"},
      {[](json& s) { s["agents"] = 5; }, "agents: type must be array"},
      {[](json& s) { s["nodes"] = {{{"state", "up"}}}; }, "nodes[0]: missing key 'spec'"},
      {[](json& s) { s["agents"][0].erase("pool"); }, "agents[0]: missing key 'pool'"},
      {[](json& s) { s["tasks"][0]["state"] = "sleeping"; }, "tasks[0].state: 'sleeping' is not one of"},
      {[](json& s) { s["stats"]["completed_tasks"] = "many"; }, "stats.completed_tasks: expected an integer"},
  };
  for (const auto& [edit, expected] : cases) {
    json state = saved;
    edit(state);
    const std::string error = load_error(dir, state.dump());
    EXPECT_NE(error.find(expected), std::string::npos) << expected << " not in: " << error;
    EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  }
  EXPECT_NE(load_error(dir, "[1, 2]").find("expected a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::cli
