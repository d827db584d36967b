// `meshsim scenario` on the shipped scripts (experiments/scenarios/): each prints the
// outcome spec/scenarios.md states, with the invariant checker on; bad scripts are
// reported with their step index and field.
#include "tools/cli/scenario_command.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cstring>
#include <set>
#include <sstream>

#include "tests/test_paths.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ScriptRun {
  int exit_code;
  std::vector<json> steps;
  std::string out, err;
};

ScriptRun run_script(const fs::path& path) {
  std::ostringstream out, err;
  const int code = run_scenario_command({path.string(), /*check=*/true, /*metrics=*/"", /*allow_files=*/true}, out, err);
  ScriptRun run{code, {}, out.str(), err.str()};
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) run.steps.push_back(json::parse(line));
  return run;
}

ScriptRun shipped(const std::string& name) {
  return run_script(fs::path(MESHSIM_SOURCE_DIR) / "experiments" / "scenarios" / (name + ".json"));
}

const json& result(const ScriptRun& run, std::size_t step) { return run.steps.at(step).at("result"); }

fs::path write_script(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("meshsim_test_scenario_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "script.json") << text;
  return dir / "script.json";
}

// Every shipped script states its outcomes in its steps' "expect" (and "expect_time"),
// named, so the runner checks them: an unmet expectation exits 1. Each script must state
// at least one, so none is merely run.
TEST(ScenarioCommandTest, ShippedScriptsMeetTheirExpectations) {
  ::unsetenv("SCHEDULEMESH_PREEMPTION_LEVEL");  // p10 expects it unset
  std::size_t scripts = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(MESHSIM_SOURCE_DIR) / "experiments" / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++scripts;
    const auto run = run_script(entry.path());
    EXPECT_EQ(run.exit_code, kExitOk) << entry.path() << ":\n" << run.err;
    std::ifstream in(entry.path());
    const json script = json::parse(in);
    std::size_t expectations = 0;
    for (const auto& step : script["steps"]) expectations += step.contains("expect") ? 1 : 0;
    EXPECT_GE(expectations, 1u) << entry.path() << " states no expectation";
  }
  EXPECT_EQ(scripts, 19u);
}

// The whole script is read and checked before step 0 runs: a bad last step changes
// nothing and prints nothing.
TEST(ScenarioCommandTest, AScriptIsCheckedWholeBeforeItsFirstStepRuns) {
  const auto run = run_script(write_script("late_error", R"({"steps": [
      {"call": "create_pool", "args": {"name": "p", "resources": {"cpu": 4, "memory": 1024}}},
      {"call": "advance", "args": {"seconds": 5}},
      {"call": "advance", "args": {"secs": 5}}]})"));
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find("steps[2].args.secs: unknown key"), std::string::npos) << run.err;
}

TEST(ScenarioCommandTest, ServingCallsNeedAServingObjectAndValidArguments) {
  auto run = run_script(write_script("no_serving", R"({"steps": [{"call": "get_status_summary"}]})"));
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.err.find("steps[0].call: 'get_status_summary' acts on serving instances: the script needs a "
                         "\"serving\" object"),
            std::string::npos)
      << run.err;
  run = run_script(write_script("bad_tag", R"({"serving": {"start_state": [{"tag": "mixed", "count": 1}]},
      "steps": [{"call": "scale_up_full", "args": {"tag": "decode"}}]})"));
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.err.find("steps[0].args.tag: expected one of 'prompt', 'token', 'mixed', got 'decode'"),
            std::string::npos)
      << run.err;
  run = run_script(write_script("bad_elastic", R"({"serving": {"start_state": [{"tag": "mixed", "count": 1}]},
      "steps": [{"call": "configure_elastic", "args": {"pool": "mixed", "min_workers": 4, "max_workers": 2}}]})"));
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.err.find("steps[0].args.min_workers: must not exceed max_workers"), std::string::npos) << run.err;
  run = run_script(write_script("bad_instance", R"({"serving": {"start_state": [{"tag": "mixed", "count": 1}]},
      "steps": [{"call": "get_instance", "args": {"instance": -1}}]})"));
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.err.find("steps[0].args.instance: expected an instance id (an integer >= 0)"), std::string::npos)
      << run.err;
  run = run_script(write_script("sku", R"({"serving": {"start_state": [{"tag": "mixed", "count": 1}]},
      "steps": [{"call": "scale_up_full", "args": {"tag": "mixed", "server_sku": "a100-80gb"}}]})"));
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(result(run, 0)["error"], "server_sku 'a100-80gb' differs from the pool's 'h100-80gb'");
}

TEST(ScenarioCommandTest, AnUnmetExpectationNamesTheStepAndPathAndExitsOne) {
  const auto run = run_script(write_script("unmet", R"({"steps": [
      {"call": "create_pool", "args": {"name": "p", "resources": {"cpu": 4, "memory": 1024}}},
      {"name": "stats-after-create", "call": "stats",
       "expect": {"pools": {"p": {"capacity": {"cpu": 5}}}, "placement_groups": 0}, "expect_time": 1.0},
      {"name": "missing-task", "call": "complete", "args": {"task_id": "x"},
       "expect": {"success": false, "error": {"contains": "no task 'x'"}}}]})"));
  EXPECT_EQ(run.exit_code, kExitExpectationsUnmet);
  EXPECT_NE(run.err.find("steps[1] (stats-after-create): result.pools.p.capacity.cpu: expected 5, got 4.0"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("steps[1] (stats-after-create): time: expected 1.0, got 0.0"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("steps[2]"), std::string::npos) << run.err;
  ASSERT_EQ(run.steps.size(), 3u);  // every step still runs and prints
  EXPECT_EQ(run.steps[1]["name"], "stats-after-create");
}

// A state file taken mid-run: loading it and saving again gives the same bytes, and the
// run continued from it (a fork) does what the original did.
TEST(ScenarioCommandTest, StateFilesRoundTripExactlyAndResumeTheRun) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  json script = json::parse(std::ifstream(fs::path(MESHSIM_SOURCE_DIR) / "experiments/scenarios/r1_rlhf_pg_pool.json"));
  // R1's steps without their expectations: the extra preemption below changes the counts.
  for (auto& step : script["steps"]) step.erase("expect");
  json steps = json::array();
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  for (std::size_t i = 0; i < 12; ++i) steps.push_back(script["steps"][i]);  // through scene 3
  steps.push_back({{"call", "execute_preemption"}, {"args", {{"task_id", "rollout-00"}, {"agent_name", "rollout-00"}, {"hold_for", "later"}}}});
  steps.push_back({{"call", "save_state"}, {"args", {{"path", a}}}});
  const std::size_t resume = steps.size();
  for (std::size_t i = 12; i < script["steps"].size(); ++i) steps.push_back(script["steps"][i]);
  steps.push_back({{"call", "load_state"}, {"args", {{"path", a}}}});
  steps.push_back({{"call", "save_state"}, {"args", {{"path", b}}}});
  const std::size_t resumed = steps.size();
  for (std::size_t i = 12; i < script["steps"].size(); ++i) steps.push_back(script["steps"][i]);
  std::ofstream(dir / "script.json") << json{{"steps", steps}}.dump();

  const auto run = run_script(dir / "script.json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_TRUE(result(run, resume - 1)["success"]);
  EXPECT_TRUE(result(run, resumed - 2)["success"]) << result(run, resumed - 2);
  std::ifstream fa(a), fb(b);
  const std::string first((std::istreambuf_iterator<char>(fa)), {}), second((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, second);
  for (std::size_t i = 0; i + resumed < run.steps.size() && resume + i < resumed - 2; ++i) {
    EXPECT_EQ(result(run, resume + i), result(run, resumed + i)) << "step " << resume + i << " vs " << resumed + i;
  }
}

TEST(ScenarioCommandTest, ABrokenStateFileIsAnErrorNamingIt) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_broken";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "state.json") << R"({"format": 1, "nodes": []})";
  const auto run = run_script(write_script("load_broken", R"({"steps": [{"call": "load_state", "args": {"path": ")" +
                                                             (dir / "state.json").string() + R"("}}]})"));
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_FALSE(result(run, 0)["success"]);
  EXPECT_NE(result(run, 0)["error"].get<std::string>().find("state.json: missing key 'saved_at'"), std::string::npos)
      << result(run, 0)["error"];
}

TEST(ScenarioCommandTest, AStateSavedAtATimeTheClockCannotShowIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_saved_at";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string saved = (dir / "saved.json").string(), edited = (dir / "edited.json").string();
  const auto save = run_script(write_script("save_for_saved_at", R"({"steps": [{"call": "save_state", "args": {"path": ")" +
                                                                 saved + R"("}}]})"));
  ASSERT_TRUE(result(save, 0)["success"]) << save.err;
  for (const json& when : {json(-5), json(1e13), json("soon")}) {
    json state = json::parse(std::ifstream(saved));
    state["saved_at"] = when;
    std::ofstream(edited) << state.dump();
    const auto load = run_script(write_script("load_saved_at", R"({"steps": [{"call": "load_state", "args": {"path": ")" +
                                                                   edited + R"("}}]})"));
    EXPECT_FALSE(result(load, 0)["success"]) << when;
    EXPECT_NE(result(load, 0)["error"].get<std::string>().find("edited.json: saved_at: expected seconds in [0, 1e12], got " +
                                                                when.dump()),
              std::string::npos)
        << result(load, 0);
  }
}

TEST(ScenarioCommandTest, MetricsAreWrittenInThePrometheusTextFormatWithTheSeedsNames) {
  const fs::path file = fs::temp_directory_path() / "meshsim_test_scenario_metrics.prom";
  fs::remove(file);
  std::ostringstream out, err;
  const auto script = fs::path(MESHSIM_SOURCE_DIR) / "experiments/scenarios/r1_rlhf_pg_pool.json";
  ASSERT_EQ(run_scenario_command({script.string(), false, file.string(), true}, out, err), kExitOk) << err.str();
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  for (const char* line : {
           "schedulemesh_preemption_count{pool=\"rlhf-pg-pool\",reason=\"label_based_preemption\"} 1\n",
           "schedulemesh_preemption_count{pool=\"rlhf-pg-pool\",reason=\"same_pool_preemption\"} 1\n",
           "# TYPE schedulemesh_preemption_execution_latency_ms histogram\n",
           "schedulemesh_task_schedule_latency_ms_bucket{le=\"0.0001\"} ",  // from 0.1 µs
           "schedulemesh_preemption_execution_latency_ms_bucket{le=\"+Inf\"} 2\n",
           "schedulemesh_preemption_execution_latency_ms_count 2\n",
           "schedulemesh_task_schedule_latency_ms_count 6\n",  // five submissions and the failed PG path
           "schedulemesh_pool_capacity{pool=\"rlhf-pg-pool\",resource=\"cpu\"} 6\n",
           "schedulemesh_pg_pool_reuse_hits{pool=\"rlhf-pg-pool\"} 2\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " missing from\n" << text;
  }
  // Every sample belongs to a metric declared with # TYPE before it.
  std::set<std::string> declared;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) declared.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (declared.count(name) == 0 && name.size() > std::strlen(suffix) &&
          name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
        name.resize(name.size() - std::strlen(suffix));
      }
    }
    EXPECT_EQ(declared.count(name), 1u) << line;
  }
}

TEST(ScenarioCommandTest, AStateThatDoesNotLoadLeavesTheRunAsItWas) {
  const fs::path dir = fs::temp_directory_path() / "meshsim_test_state_inconsistent";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  // A state whose agent names a pool that is not in it.
  const auto save = run_script(write_script("save_good", R"({"steps": [
      {"call": "create_pool", "args": {"name": "p", "resources": {"cpu": 2, "memory": 1024}}},
      {"call": "create_agent", "args": {"name": "a", "pool": "p", "resources": {"cpu": 1, "memory": 512}}},
      {"call": "save_state", "args": {"path": ")" + good + R"("}}]})"));
  ASSERT_EQ(save.exit_code, kExitOk) << save.err;
  json state = json::parse(std::ifstream(good));
  state["pools"] = json::array();
  std::ofstream(dir / "bad.json") << state.dump();
  // A hold on the only slot, then a failed load, then the hold's expiry.
  const auto run = run_script(write_script("load_inconsistent", R"({"steps": [
      {"call": "create_pool", "args": {"name": "q", "resources": {"cpu": 1, "memory": 512}}},
      {"call": "submit_task_with_preemption", "args": {"task_id": "t", "pool_name": "q", "priority": 1, "resources": {"cpu": 1, "memory": 512}}},
      {"call": "execute_preemption", "args": {"task_id": "t", "agent_name": "t", "hold_for": "never-comes"}},
      {"call": "advance", "args": {"seconds": 5}},
      {"call": "load_state", "args": {"path": ")" + (dir / "bad.json").string() + R"("}},
      {"call": "advance", "args": {"seconds": 30}},
      {"call": "submit_task_with_preemption", "args": {"task_id": "u", "pool_name": "q", "priority": 1, "resources": {"cpu": 1, "memory": 512}}}]})"));
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_FALSE(result(run, 4)["success"]);
  EXPECT_NE(result(run, 4)["error"].get<std::string>().find("agent a names no known pool"), std::string::npos);
  EXPECT_EQ(run.steps[4]["time"], 5.0);  // the clock did not move back
  EXPECT_TRUE(result(run, 6)["success"]) << "the hold still expired on time: " << result(run, 6);
}

TEST(ScenarioCommandTest, StateFilesCanBeDisabledForSandboxedRuns) {
  const auto script = json::parse(R"({"steps": [{"call": "save_state", "args": {"path": "/nonexistent/never-written.json"}}]})");
  std::ostringstream out, err;
  ASSERT_EQ(run_scenario(script, {"inline.json", true, "", /*allow_files=*/false}, out, err), kExitOk) << err.str();
  const json line = json::parse(out.str());
  EXPECT_FALSE(line["result"]["success"]);
  EXPECT_EQ(line["result"]["error"], "state files are disabled in this run");
}

TEST(ScenarioCommandTest, TheSameScriptPrintsTheSameBytes) {
  EXPECT_EQ(shipped("r1_rlhf_pg_pool").out, shipped("r1_rlhf_pg_pool").out);
}

TEST(ScenarioCommandTest, BadScriptsNameTheStepAndField) {
  const struct {
    const char* script;
    const char* message;
  } cases[] = {
      {R"({"steps": [{"call": "advance", "args": {"seconds": 1}}, {"call": "evaluate_preemption", "args": {"incoming_task_pool": "p"}}]})",
       "steps[1].args.incoming_task_priority: required (a number)"},
      {R"({"steps": [{"call": "complete", "args": {"task_id": 7}}]})", "steps[0].args.task_id: expected a string"},
      {R"({"steps": [{"call": "preempt_everything"}]})", "steps[0].call: unknown call 'preempt_everything'"},
      {R"({"steps": [{"call": "complete", "args": {"task_id": "a", "taskid": "b"}}]})", "steps[0].args.taskid"},
      {R"({"steps": [{"call": "create_pool", "args": {"name": "p", "resources": {"cpu": -1}}}]})",
       "steps[0].args.resources.cpu"},
      // Issue 8: amounts that overflow the milli-unit ledgers ended as internal errors.
      {R"({"steps": [{"call": "create_pool", "args": {"name": "p", "resources": {"cpu": 1e308}}}]})",
       "steps[0].args.resources.cpu: expected a number in [0, 1e12], got 1e+308"},
      {R"({"nodes": [{"name": "n", "resources": {"cpu": 1e16, "memory": 1, "gpu": 1}}], "steps": []})",
       "nodes[0].resources.cpu: expected a number in [0, 1e12], got 1e+16"},
      {R"({"steps": [{"call": "stats", "comment": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]})",
       "invalid JSON: nested deeper than 64 levels"},
  };
  for (const auto& c : cases) {
    const auto run = run_script(write_script("bad", c.script));
    EXPECT_EQ(run.exit_code, kExitBadInput) << c.script;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
  }
  // A call that fails in the API is a normal result, not a script error.
  const auto failing = run_script(write_script("api_fail", R"({"steps": [{"call": "complete", "args": {"task_id": "x"}}]})"));
  EXPECT_EQ(failing.exit_code, kExitOk);
  EXPECT_FALSE(result(failing, 0)["success"]);
}

}  // namespace
}  // namespace meshsim::cli
