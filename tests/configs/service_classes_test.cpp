// The scenario's classes of service: read with their defaults, wired into the workload
// (shares or a trace's class column), the serving (priorities) and the replay (SLOs), and
// every inconsistent combination refused naming the key.
#include "configs/service_classes.hpp"

#include <gtest/gtest.h>

#include "configs/serving_config.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;
using engine::SimTime;

const char* kGenerator = R"("workload": {"generator": {"arrivals": {"rate_per_s": 2},
    "prompt_tokens": {"value": 10}, "output_tokens": {"value": 5}, "requests": 100}})";
const char* kServeGen = R"("workload": {"servegen": {"path": "sg"}})";
const char* kTrace = R"("workload": {"trace": {"path": "t.csv", "format": "csv", "columns": {"class": "tier"}}})";

Expected<ScenarioConfig> parse(const std::string& workload, const std::string& rest) {
  return parse_scenario(json::parse("{" + workload + (rest.empty() ? "" : ", " + rest) + "}"), "s.json");
}

std::string error_of(const std::string& workload, const std::string& rest) {
  auto config = parse(workload, rest);
  return config ? "" : config.error().message;
}

TEST(ServiceClassesTest, ClassesTakeTheScenarioSloUnlessTheyNameTheirOwn) {
  auto config = parse(kGenerator, R"("slo": {"ttft_ms": 800, "tbt_ms": 90},
      "classes": [{"name": "chat", "priority": -2, "share": 0.25, "slo": {"ttft_ms": 300}},
                  {"name": "batch", "priority": 5, "share": 0.75}])");
  ASSERT_TRUE(config) << config.error().message;
  const auto& classes = config->replay.classes;
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].slo.ttft, SimTime::from_ms(300));
  EXPECT_EQ(classes[0].slo.tbt, SimTime::from_ms(90));
  EXPECT_EQ(classes[1].slo.ttft, SimTime::from_ms(800));
  EXPECT_EQ(config->workload.class_shares, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(std::get<LlmServingSpec>(config->serving).class_priorities, (std::vector<std::int32_t>{-2, 5}));
  // The resolved config writes them back, and reads back to the same.
  const json resolved = to_json(*config);
  ASSERT_TRUE(resolved.contains("classes"));
  auto again = parse_scenario(resolved, "resolved.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), resolved);
}

TEST(ServiceClassesTest, ATraceColumnNamesEachRequestsClass) {
  auto config = parse(kTrace, R"("classes": [{"name": "gold"}, {"name": "bronze", "priority": 1}])");
  ASSERT_TRUE(config) << config.error().message;
  const auto& file = std::get<traces::TraceFileSpec>(config->workload.source);
  EXPECT_EQ(file.columns.service_class, "tier");
  EXPECT_EQ(file.columns.class_names, (std::vector<std::string>{"gold", "bronze"}));
  EXPECT_TRUE(config->workload.class_shares.empty());
  EXPECT_EQ(to_json(*config)["workload"]["trace"]["columns"]["class"], "tier");
}

TEST(ServiceClassesTest, ServeGenClientsNameTheirClassAndOneClassTakesTheOthers) {
  auto config = parse(kServeGen, R"("classes": [{"name": "vip", "priority": 0, "clients": ["chunk-3", "chunk-9"]},
                                                {"name": "rest", "priority": 2}])");
  ASSERT_TRUE(config) << config.error().message;
  const auto& servegen = std::get<traces::ServeGenSpec>(config->workload.source);
  using Named = std::vector<std::pair<std::string, std::uint8_t>>;
  EXPECT_EQ(servegen.client_classes, (Named{{"chunk-3", 0}, {"chunk-9", 0}}));
  EXPECT_EQ(servegen.other_class, std::optional<std::uint8_t>(1));
  EXPECT_EQ(to_json(*config)["classes"][0]["clients"], (json{"chunk-3", "chunk-9"}));
}

TEST(ServiceClassesTest, WithoutClassesNothingChanges) {
  auto config = parse(kGenerator, "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->replay.classes.empty());
  EXPECT_TRUE(config->workload.class_shares.empty());
  EXPECT_TRUE(std::get<LlmServingSpec>(config->serving).class_priorities.empty());
  EXPECT_FALSE(to_json(*config).contains("classes"));
}

TEST(ServiceClassesTest, InconsistentClassesAreRefusedNamingTheKey) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {kGenerator, R"("classes": [{"name": "a"}, {"name": "b"}])", "classes: expected a share for each class"},
      {kGenerator, R"("classes": [{"name": "a", "clients": ["chunk-1"]}, {"name": "b"}])",
       "classes by \"clients\" need a ServeGen workload"},
      {kServeGen, R"("classes": [{"name": "a", "clients": ["chunk-1"]}, {"name": "b"}, {"name": "c"}])",
       "at most one class may name no clients"},
      {kServeGen, R"("classes": [{"name": "a", "clients": ["chunk-1"]}, {"name": "b", "clients": ["chunk-1"]}])",
       "client 'chunk-1' is named by two classes"},
      {kServeGen, R"("classes": [{"name": "a", "clients": []}])", "classes[0].clients: expected a list of ServeGen"},
      {kGenerator, R"("classes": [{"name": "a", "share": 0.5}, {"name": "b"}])", "1 of 2 have one"},
      {kGenerator, R"("classes": [{"name": "a", "share": 0.5}, {"name": "b", "share": 0.4}])", "summing to 1"},
      {kGenerator, R"("classes": [{"name": "a", "share": 0.5}, {"name": "a", "share": 0.5}])",
       "classes[1].name: 'a' names two classes"},
      {kGenerator, R"("classes": [{"share": 1}])", "classes[0].name: expected the class's name"},
      {kGenerator, R"("classes": [{"name": "a", "share": 1, "priority": 1.5}])", "classes[0].priority: expected an integer"},
      {kGenerator, R"("classes": [{"name": "a", "share": 0}])", "classes[0].share: expected a fraction in (0, 1]"},
      {kGenerator, R"("classes": [{"name": "a", "share": 1, "slo": {"ttft": 3}}])", "classes[0].slo.ttft: unknown key"},
      {kGenerator, R"("classes": [])", "classes: expected a list of 1 to 16 classes"},
      {kGenerator, R"("classes": {"name": "a"})", "classes: expected a list"},
      {kTrace, R"("classes": [{"name": "a", "share": 1}])", "classes: expected either shares or the trace's class column"},
      {kTrace, "", "workload.trace.columns.class: a class column needs the scenario's classes"},
  };
  for (const auto& [workload, rest, expected] : cases) {
    const std::string error = error_of(workload, rest);
    EXPECT_NE(error.find(expected), std::string::npos) << rest << "\n" << error;
  }
}

}  // namespace
}  // namespace meshsim::configs
