// Requests' classes of service: read from a trace's class column (CSV and JSON lines, any
// format), or drawn by the classes' shares, the same draw for a request whatever shapes
// the workload around it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>

#include "traces/class_share_source.hpp"
#include "traces/csv_trace_reader.hpp"
#include "traces/episode_workload.hpp"
#include "traces/jsonl_trace_reader.hpp"
#include "tests/traces/read_all.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

ColumnMapping with_classes(ColumnMapping mapping) {
  mapping.service_class = "tier";
  mapping.class_names = {"gold", "silver", "bronze"};
  return mapping;
}

using testing::ReadAll;
using testing::read_all;

ReadAll csv(const std::string& text, TraceFormat format = TraceFormat::kCsv) {
  CsvTraceReader reader(std::make_unique<std::istringstream>(text), "t.csv", text.size(),
                        preset_mapping(format, with_classes({})));
  return read_all(reader);
}
ReadAll jsonl(const std::string& text, TraceFormat format = TraceFormat::kJsonl) {
  JsonlTraceReader reader(std::make_unique<std::istringstream>(text), "t.jsonl", text.size(),
                          preset_mapping(format, with_classes({})));
  return read_all(reader);
}

std::vector<int> classes_of(const ReadAll& all) {
  std::vector<int> out;
  for (const auto& r : all.requests) out.push_back(r.service_class);
  return out;
}

TEST(ServiceClassColumnTest, EachRowsClassIsReadByName) {
  const auto plain = csv("timestamp,prompt_tokens,output_tokens,tier\n0,10,5,bronze\n1,10,5,gold\n2,10,5,silver\n");
  ASSERT_EQ(plain.error, "");
  EXPECT_EQ(classes_of(plain), (std::vector<int>{2, 0, 1}));
  const auto azure = csv("TIMESTAMP,ContextTokens,GeneratedTokens,tier\n2023-11-16 18:15:46,10,5,silver\n",
                         TraceFormat::kAzureCsv);
  ASSERT_EQ(azure.error, "");
  EXPECT_EQ(classes_of(azure), (std::vector<int>{1}));
  const auto lines = jsonl(R"({"timestamp": 0, "prompt_tokens": 3, "output_tokens": 2, "tier": "gold"}
{"timestamp": 1, "prompt_tokens": 3, "output_tokens": 2, "tier": "bronze"}
)");
  ASSERT_EQ(lines.error, "");
  EXPECT_EQ(classes_of(lines), (std::vector<int>{0, 2}));
  const auto mooncake = jsonl(R"({"timestamp": 0, "input_length": 3, "output_length": 2, "hash_ids": [1], "tier": "silver"})",
                              TraceFormat::kMooncakeJsonl);
  ASSERT_EQ(mooncake.error, "");
  EXPECT_EQ(classes_of(mooncake), (std::vector<int>{1}));
}

TEST(ServiceClassColumnTest, AnUnknownOrMissingClassIsRefusedNamingTheLine) {
  EXPECT_EQ(csv("timestamp,prompt_tokens,output_tokens,tier\n0,10,5,gold\n1,10,5,platinum\n").error,
            "t.csv:3: column 'tier': expected a class of the scenario's classes ('gold', 'silver', 'bronze'), got "
            "'platinum'");
  EXPECT_NE(csv("timestamp,prompt_tokens,output_tokens\n0,10,5\n").error.find("missing column 'tier'"),
            std::string::npos);
  EXPECT_EQ(jsonl(R"({"timestamp": 0, "prompt_tokens": 3, "output_tokens": 2, "tier": 7})").error,
            "t.jsonl:1: key 'tier': expected a class name, got '7'");
  EXPECT_EQ(jsonl(R"({"timestamp": 0, "prompt_tokens": 3, "output_tokens": 2})").error,
            "t.jsonl:1: missing key 'tier'");
  EXPECT_EQ(jsonl(R"({"timestamp": 0, "prompt_tokens": 3, "output_tokens": 2, "tier": "tin"})").error,
            "t.jsonl:1: key 'tier': expected a class of the scenario's classes ('gold', 'silver', 'bronze'), got 'tin'");
}

TEST(ClassShareSourceTest, SharesAreMetAndARequestsClassDependsOnItsIdAlone) {
  const std::vector<double> shares = {0.1, 0.6, 0.3};
  std::map<int, int> counts;
  const int n = 100'000;
  for (int id = 0; id < n; ++id) ++counts[ClassShareSource::draw(shares, 42, static_cast<std::uint64_t>(id))];
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(counts[c] / double(n), shares[c], 0.005) << c;
  // Another seed draws other classes for the same ids, in the same proportions.
  int moved = 0;
  for (int id = 0; id < 1000; ++id) {
    moved += ClassShareSource::draw(shares, 42, static_cast<std::uint64_t>(id)) !=
             ClassShareSource::draw(shares, 43, static_cast<std::uint64_t>(id));
  }
  EXPECT_GT(moved, 300);
  // A request keeps its class whatever window and rate scale shape the workload.
  WorkloadSpec spec;
  GeneratorSpec generator;
  generator.arrivals.rate_per_s = 50;
  generator.prompt_tokens.value = 10;
  generator.output_tokens.value = 5;
  generator.requests = 2000;
  spec.source = generator;
  spec.class_shares = shares;
  auto whole = open_workload(spec, 7);
  ASSERT_TRUE(whole) << whole.error().message;
  std::map<std::uint64_t, int> class_of;
  for (const auto& r : read_all(**whole).requests) class_of[r.id] = r.service_class;
  spec.window_start = SimTime::from_seconds(10);
  spec.window_end = SimTime::from_seconds(20);
  spec.rate_scale = 3;
  auto window = open_workload(spec, 7);
  ASSERT_TRUE(window) << window.error().message;
  const auto part = read_all(**window);
  ASSERT_GT(part.requests.size(), 100u);
  for (const auto& r : part.requests) EXPECT_EQ(r.service_class, class_of.at(r.id)) << r.id;
}

// Classes named by the workload itself (a trace's column, ServeGen's clients) cannot
// survive a swap to a workload that does not name them: that is refused, by every opener,
// rather than putting every request in the first class.
TEST(ServiceClassWorkloadTest, AWorkloadThatCannotNameTheClassesIsRefused) {
  GeneratorSpec generator;
  generator.requests = 10;
  TraceFileSpec plain{"t.csv", TraceFormat::kCsv, {}};
  TraceFileSpec classed = plain;
  classed.columns = with_classes({});
  ServeGenSpec by_client;
  by_client.client_classes = {{"chunk-1", 0}};
  const std::vector<std::pair<WorkloadSpec::Source, bool>> cases{
      {generator, false}, {plain, false}, {ServeGenSpec{}, false}, {classed, true}, {by_client, true}};
  for (const auto& [source, names_classes] : cases) {
    WorkloadSpec spec;
    spec.source = source;
    EXPECT_TRUE(validate_classes(spec)) << "no classes: nothing to name";
    spec.class_count = 3;
    EXPECT_EQ(bool(validate_classes(spec)), names_classes) << source.index();
    spec.class_shares = {0.2, 0.3, 0.5};
    EXPECT_TRUE(validate_classes(spec)) << "shares name the classes of any workload";
  }
  WorkloadSpec swapped;
  swapped.source = generator;
  swapped.class_count = 2;
  for (const auto& error : {open_workload(swapped, 1).error().message, open_episode_workload(swapped, 1).error().message}) {
    EXPECT_NE(error.find("2 classes of service"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace meshsim::traces
