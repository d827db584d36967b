// Classes of service through `meshsim replay` on the shipped two-class scenario: under
// overload vLLM's priority policy keeps the high class within its SLO while the low one
// absorbs the misses, every count adds up per class, and requests.csv names each request's
// class. Under FCFS both classes wait alike: the priority is what protects the high class.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;
using testing::csv_rows;
using testing::fresh_dir;
using testing::slurp;

struct ClassRun {
  json summary;
  std::string requests_csv, metrics, out;
};

ClassRun run_two_classes(const std::string& name, const std::string& policy) {
  const auto dir = fresh_dir(name);
  ReplayCommandOptions options;
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/two-classes.json";
  options.out_dir = dir.string();
  options.sets = {"serving.vllm.scheduling_policy=" + policy};
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  return ClassRun{json::parse(slurp(dir / "summary.json")), slurp(dir / "requests.csv"), slurp(dir / "metrics.prom"),
                  out.str()};
}

const json& class_named(const json& summary, const std::string& name) {
  for (const json& c : summary.at("classes")) {
    if (c.at("name") == name) return c;
  }
  ADD_FAILURE() << "no class " << name;
  return summary;
}

TEST(ServiceClassesCommandTest, UnderOverloadTheHighClassKeepsItsSloAndTheLowOneAbsorbsTheMisses) {
  const ClassRun run = run_two_classes("two_classes_priority", "priority");
  const json& s = run.summary;
  ASSERT_TRUE(s.at("overload").at("overloaded").get<bool>()) << "the scenario must overload its deployment";
  const json& chat = class_named(s, "chat");
  const json& batch = class_named(s, "batch");
  EXPECT_GE(chat["slo"]["attainment"].get<double>(), 0.95) << chat.dump();
  EXPECT_LT(batch["slo"]["attainment"].get<double>(), 0.5) << batch.dump();
  // Counts add up per class and across classes.
  std::map<std::string, std::uint64_t> sum;
  for (const json& c : s["classes"]) {
    const json& r = c["requests"];
    EXPECT_EQ(r["arrived"], r["completed"].get<std::uint64_t>() + r["dropped"].get<std::uint64_t>() +
                                r["in_flight"].get<std::uint64_t>())
        << c["name"];
    for (const char* key : {"arrived", "completed", "dropped", "in_flight"}) sum[key] += r[key].get<std::uint64_t>();
  }
  for (const char* key : {"arrived", "completed", "dropped", "in_flight"}) EXPECT_EQ(sum[key], s["requests"][key]) << key;
  // requests.csv: one row per request, its class named, as many of each as the summary says.
  std::map<std::string, std::uint64_t> rows_of;
  for (const auto& row : csv_rows(run.requests_csv)) ++rows_of[row.at("class")];
  EXPECT_EQ(rows_of["chat"], chat["requests"]["arrived"].get<std::uint64_t>());
  EXPECT_EQ(rows_of["batch"], batch["requests"]["arrived"].get<std::uint64_t>());
  EXPECT_EQ(rows_of.size(), 2u);
  // The shares hold roughly (30% chat).
  const double chat_share = chat["requests"]["arrived"].get<double>() / s["requests"]["arrived"].get<double>();
  EXPECT_NEAR(chat_share, 0.3, 0.05);
  // metrics.prom has each class's counts, attainment and goodput.
  EXPECT_NE(run.metrics.find("meshsim_class_slo_attainment{class=\"chat\"} "), std::string::npos) << run.metrics;
  EXPECT_NE(run.metrics.find("meshsim_class_requests_total{class=\"batch\",status=\"in_flight\"} " +
                             std::to_string(batch["requests"]["in_flight"].get<std::uint64_t>())),
            std::string::npos);
  EXPECT_NE(run.metrics.find("meshsim_class_goodput_per_second{class=\"chat\"} "), std::string::npos);
  // The terminal table has a line per class.
  EXPECT_NE(run.out.find("class       chat (priority 0)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("class       batch (priority 1)"), std::string::npos) << run.out;
}

TEST(ServiceClassesCommandTest, WithoutThePriorityPolicyTheHighClassWaitsAsLongAsTheLowOne) {
  const ClassRun fcfs = run_two_classes("two_classes_fcfs", "fcfs");
  const ClassRun priority = run_two_classes("two_classes_priority_again", "priority");
  const double chat_fcfs = class_named(fcfs.summary, "chat")["slo"]["attainment"].get<double>();
  const double chat_priority = class_named(priority.summary, "chat")["slo"]["attainment"].get<double>();
  EXPECT_LT(chat_fcfs, chat_priority - 0.3) << "FCFS " << chat_fcfs << ", priority " << chat_priority;
  // The same requests arrive with the same classes either way.
  EXPECT_EQ(class_named(fcfs.summary, "chat")["requests"]["arrived"],
            class_named(priority.summary, "chat")["requests"]["arrived"]);
}

// Classes named by the trace's own column: the scenario runs with each row's class, and a
// --trace that has no such column is refused by name instead of putting every request in
// the first class.
TEST(ServiceClassesCommandTest, ATraceSwappedInMustStillNameTheClasses) {
  const auto dir = fresh_dir("classes_by_column");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tiers.csv") << "t,p,o,tier\n0,100,10,gold\n0.5,100,10,bronze\n1,100,10,bronze\n";
  std::ofstream(dir / "plain.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                      "2023-11-16 18:15:46,100,10\n2023-11-16 18:15:47,100,10\n";
  std::ofstream(dir / "scenario.json") << R"({
    "workload": {"trace": {"path": "tiers.csv", "format": "csv",
                           "columns": {"arrival": "t", "prompt_tokens": "p", "output_tokens": "o", "class": "tier"}}},
    "serving": {"kind": "llm", "model": "llama2-70b", "sku": "h100-80gb", "tensor_parallel": 4,
                "start_state": [{"tag": "mixed", "count": 1}]},
    "classes": [{"name": "gold", "priority": 0}, {"name": "bronze", "priority": 1}]
  })";
  ReplayCommandOptions options;
  options.config_path = (dir / "scenario.json").string();
  options.out_dir = (dir / "run").string();
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const json summary = json::parse(slurp(dir / "run" / "summary.json"));
  EXPECT_EQ(class_named(summary, "gold")["requests"]["arrived"], 1);
  EXPECT_EQ(class_named(summary, "bronze")["requests"]["arrived"], 2);

  options.trace = (dir / "plain.csv").string();
  options.out_dir = (dir / "swapped").string();
  std::ostringstream out2, err2;
  EXPECT_EQ(run_replay_command(options, out2, err2), kExitBadInput);
  EXPECT_NE(err2.str().find("2 classes of service"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace meshsim::cli
