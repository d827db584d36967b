// The scenario-script interpreter as a library: its call table, and a script's serving
// instances and scheduling core on one clock.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sim/script/script_session.hpp"

namespace meshsim::script {
namespace {

using nlohmann::json;

// A serving setup whose instances take 10 s to start (E4's, with constant iterations).
json serving_setup() {
  return json::parse(R"({
    "serving": {"model": "llama2-70b", "sku": "h100-80gb", "tensor_parallel": 8, "backend": "constant",
                "constant": {"prefill_ms": 10, "decode_ms": 20},
                "start_state": [{"tag": "prompt", "count": 1}, {"tag": "token", "count": 1}],
                "kv": {"capacity_tokens": 100000}},
    "scaling": {"scale_up_delay_s": 10, "max_total_instances": 5}})");
}

std::unique_ptr<ScriptSession> session(const json& setup, StateStore* states = nullptr) {
  auto made = ScriptSession::create(setup, "test", states);
  EXPECT_TRUE(made) << made.error().message;
  return std::move(*made);
}

json call(ScriptSession& s, const std::string& name, const json& args = json::object()) {
  auto result = s.call(name, args);
  EXPECT_TRUE(result) << name << ": " << result.error().message;
  return result ? *result : json();
}

// A hung agent running a task, ready to be preempted (its cancel waits 30 s).
void hang_a_running_task(ScriptSession& s) {
  call(s, "create_pool", {{"name", "batch"}, {"resources", {{"cpu", 4}}}});
  ASSERT_TRUE(call(s, "submit_task_with_preemption",
                   {{"task_id", "t"}, {"pool_name", "batch"}, {"resources", {{"cpu", 1}}}, {"priority", 1}})["success"]);
  call(s, "hang_agent", {{"agent_name", "t"}});
}

class MemoryStates final : public StateStore {
 public:
  Status save(const std::string& path, const scheduler::SchedulerState& state) override {
    states_.insert_or_assign(path, state);
    return Ok();
  }
  Expected<scheduler::SchedulerState> load(const std::string& path) override {
    const auto it = states_.find(path);
    if (it == states_.end()) return Error{path + ": no such state"};
    return it->second;
  }

 private:
  std::map<std::string, scheduler::SchedulerState> states_;
};

TEST(ScriptCallsTest, EveryCallHasOneUniqueNameASummaryAndAParser) {
  std::set<std::string_view> names;
  for (const CallSpec& call : script_calls()) {
    EXPECT_TRUE(names.insert(call.name).second) << call.name << " is in the table twice";
    EXPECT_FALSE(call.summary.empty()) << call.name;
    EXPECT_NE(call.parse, nullptr) << call.name;
    EXPECT_EQ(find_call(call.name), &call);
  }
  EXPECT_EQ(find_call("no_such_call"), nullptr);
  EXPECT_GE(names.size(), 37u);
}

TEST(ScriptCallsTest, ExactlyTheServingCallsNeedAServingObject) {
  auto core_only = session(json::object());
  for (const CallSpec& call : script_calls()) {
    const auto result = core_only->call(std::string(call.name), json::object());
    const bool refused_for_serving =
        !result && result.error().message.find("needs a \"serving\" object") != std::string::npos;
    EXPECT_EQ(refused_for_serving, call.serving) << call.name;
  }
}

TEST(ScriptSessionTest, AHungAgentsWaitMovesTheServingInstancesToo) {
  // One clock: the 30 s a hung agent's cancel takes pass for the serving instances as
  // well, so an instance scaled up before it is ACTIVE after it, with no advance.
  auto s = session(serving_setup());
  hang_a_running_task(*s);
  const json up = call(*s, "scale_up_full", {{"tag", "prompt"}});
  ASSERT_TRUE(up["success"]) << up;
  EXPECT_EQ(call(*s, "get_instance", {{"instance", up["instance"]}})["state"], "starting");
  const json preempted = call(*s, "execute_preemption", {{"task_id", "t"}, {"agent_name", "t"}});
  ASSERT_TRUE(preempted["success"]) << preempted;
  EXPECT_FALSE(preempted["cancel_success"]);
  EXPECT_DOUBLE_EQ(s->now(), 30);
  EXPECT_EQ(call(*s, "get_instance", {{"instance", up["instance"]}})["state"], "active");
  // Requests submitted now arrive now: after the wait, not at the serving side's last advance.
  call(*s, "submit_requests", {{"count", 1}, {"prompt_tokens", 100}, {"output_tokens", 1}});
  call(*s, "advance", {{"seconds", 1}});
  EXPECT_EQ(call(*s, "get_request_counts")["completed"], 1);
}

TEST(ScriptSessionTest, WithServingInstancesAStateSavedAtAnotherTimeIsRefused) {
  MemoryStates states;
  auto s = session(serving_setup(), &states);
  ASSERT_TRUE(call(*s, "save_state", {{"path", "early"}})["success"]);
  call(*s, "advance", {{"seconds", 5}});
  const json refused = call(*s, "load_state", {{"path", "early"}});
  EXPECT_FALSE(refused["success"]);
  EXPECT_NE(refused["error"].get<std::string>().find("cannot follow"), std::string::npos) << refused;
  EXPECT_DOUBLE_EQ(s->now(), 5);
  ASSERT_TRUE(call(*s, "save_state", {{"path", "now"}})["success"]);
  EXPECT_TRUE(call(*s, "load_state", {{"path", "now"}})["success"]);
  // Without serving instances the clock goes back.
  auto core_only = session(json::object(), &states);
  call(*core_only, "advance", {{"seconds", 9}});
  EXPECT_TRUE(call(*core_only, "load_state", {{"path", "early"}})["success"]);
  EXPECT_DOUBLE_EQ(core_only->now(), 0);
}

TEST(ScriptSessionTest, AStartStateBeyondTheScalingLimitIsRefused) {
  json setup = serving_setup();
  setup["serving"]["start_state"][0]["count"] = 10'000'000;
  const auto made = ScriptSession::create(setup, "big", nullptr);
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().message.find("serving.start_state: 10000001 instances in all exceed"), std::string::npos)
      << made.error().message;
}

TEST(ScriptSessionTest, TwoNodesOfOneNameAreRefusedByTheName) {
  const json setup = json::parse(R"({"nodes": [{"name": "a", "resources": {"cpu": 4}},
                                               {"name": "b", "resources": {"cpu": 4}},
                                               {"name": "a", "resources": {"cpu": 8}}]})");
  const auto made = ScriptSession::create(setup, "twice.json", nullptr);
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().message.find("twice.json: nodes[2].name: 'a' names an earlier node too"), std::string::npos)
      << made.error().message;
}

TEST(ScriptSessionTest, AnAdvancePastTheClocksLimitFailsAndLeavesTheClock) {
  auto s = session(serving_setup());
  call(*s, "submit_requests", {{"count", 1}, {"prompt_tokens", 100}, {"output_tokens", 1}});
  const json refused = call(*s, "advance", {{"seconds", 1e13}});
  EXPECT_FALSE(refused["success"]);
  EXPECT_DOUBLE_EQ(s->now(), 0);
  call(*s, "advance", {{"seconds", 1}});
  EXPECT_EQ(call(*s, "get_request_counts")["completed"], 1);
}

}  // namespace
}  // namespace meshsim::script
