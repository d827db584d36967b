// ServeGen's per-client lengths (traces/servegen_lengths.hpp): the dict text read exactly
// or refused with the reason, each client's requests drawing its own lengths at their
// time, a client without a file drawing from every client's pooled, and the real data.
#include "traces/servegen_lengths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/shared_data.hpp"
#include "traces/servegen_source.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

namespace fs = std::filesystem;

TEST(ServeGenLengthsTest, TheDictTextIsReadAsAnInverseCdf) {
  auto lengths = parse_length_dict("{9: 0.25, 163: 0.5, 1000: 0.25}");
  ASSERT_TRUE(lengths) << lengths.error().message;
  EXPECT_EQ(lengths->tokens, (std::vector<std::uint32_t>{9, 163, 1000}));
  EXPECT_EQ(lengths->cumulative, (std::vector<double>{0.25, 0.75, 1.0}));
  EXPECT_EQ(lengths->sample(0.0), 9u);
  EXPECT_EQ(lengths->sample(0.2499), 9u);
  EXPECT_EQ(lengths->sample(0.25), 163u);
  EXPECT_EQ(lengths->sample(0.9999), 1000u);
  // Probabilities that do not sum to 1 are normalised; 0 tokens is 1; "{}" is empty.
  EXPECT_EQ(parse_length_dict("{0: 1, 5: 3}")->tokens, (std::vector<std::uint32_t>{1, 5}));
  EXPECT_EQ(parse_length_dict("{0: 1, 5: 3}")->cumulative, (std::vector<double>{0.25, 1.0}));
  EXPECT_TRUE(parse_length_dict(" {} ")->empty());
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"[1, 2]", "expected a dict"},
           {"{1.5: 1}", "whole number of tokens"},
           {"{-3: 1}", "whole number of tokens"},
           {"{3 1}", "expected ':'"},
           {"{3: -1}", "probability >= 0"},
           {"{3: 1 4: 1}", "expected ',' or '}'"},
           {"{3: 1, 3: 2}", "appears twice"},
           {"{3: 0}", "do not all sum to 0"},
           {"{3: 1} x", "nothing after"}}) {
    const auto parsed = parse_length_dict(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find(why), std::string::npos) << bad << ": " << parsed.error().message;
  }
}

TEST(ServeGenLengthsTest, MixturesWeighTheirParts) {
  const auto a = *parse_length_dict("{100: 1}"), b = *parse_length_dict("{100: 0.5, 300: 0.5}");
  const EmpiricalLengths mixed = mixture({{&a, 1.0}, {&b, 2.0}, {nullptr, 5.0}, {&a, 0.0}});
  EXPECT_EQ(mixed.tokens, (std::vector<std::uint32_t>{100, 300}));
  EXPECT_NEAR(mixed.cumulative[0], 2.0 / 3, 1e-12);
}

TEST(ServeGenLengthsTest, TheWindowInForceElseTheNearestWithLengths) {
  ClientLengths c;
  c.window_start_s = {0, 100, 200, 300};
  for (const char* text : {"{}", "{5: 1}", "{}", "{7: 1}"}) {
    c.input.push_back(*parse_length_dict(text));
    c.output.push_back(*parse_length_dict(text));
  }
  EXPECT_EQ(c.window_at(150), 1);
  EXPECT_EQ(c.window_at(320), 3);
  EXPECT_EQ(c.window_at(0), 1);    // empty: the nearest with lengths
  EXPECT_EQ(c.window_at(250), 1);  // equally near 100 and 300: the earlier
  EXPECT_EQ(ClientLengths{}.window_at(5), -1);
}

// Clients A and C (each with lengths) play the first 600 s window, B (none) the second:
// A's and C's requests carry their own lengths paired (prompt 100 with output 1, 300 with
// 2); B's draw prompt and output from the pooled lengths, independently.
TEST(ServeGenLengthsTest, EachClientDrawsItsOwnLengthsAndOneWithoutAFileThePooled) {
  const fs::path folder = fs::temp_directory_path() / "meshsim_servegen_lengths";
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::ofstream(folder / "chunk-1-trace.csv") << "0,2,1,Gamma,1,1\n600,0,0,,0,0\n";
  std::ofstream(folder / "chunk-2-trace.csv") << "0,0,0,,0,0\n600,4,1,Gamma,1,1\n";
  std::ofstream(folder / "chunk-3-trace.csv") << "0,2,1,Gamma,1,1\n600,0,0,,0,0\n";
  std::ofstream(folder / "chunk-1-dataset.json") << R"({"0": {"input_tokens": "{100: 1.0}", "output_tokens": "{1: 1.0}"}})";
  std::ofstream(folder / "chunk-3-dataset.json") << R"({"0": {"input_tokens": "{300: 1.0}", "output_tokens": "{2: 1.0}"}})";
  ServeGenSpec spec;
  spec.path = folder.string();
  WorkloadSpec workload;
  workload.source = spec;
  auto source = open_workload(workload, 3);
  ASSERT_TRUE(source) << source.error().message;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> first, second;
  for (;;) {
    auto next = (*source)->next();
    ASSERT_TRUE(next) << next.error().message;
    if (!*next) break;
    const TraceRequest& r = **next;
    (r.arrival.seconds() < 600 ? first : second)[{r.prompt_tokens, r.output_tokens}]++;
  }
  EXPECT_EQ(first.size(), 2u);
  EXPECT_GT((first[{100, 1}]), 1000);
  EXPECT_GT((first[{300, 2}]), 1000);
  EXPECT_EQ(second.size(), 4u) << "pooled: prompt and output drawn apart";
  for (const auto& [pair, count] : second) EXPECT_GT(count, 300) << pair.first << "/" << pair.second;

  // Lengths asked of the clients where none has a file: refused, saying what to give.
  fs::remove(folder / "chunk-1-dataset.json");
  fs::remove(folder / "chunk-3-dataset.json");
  auto none = open_workload(workload, 3);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("give lengths: model"), std::string::npos) << none.error().message;
  std::ofstream(folder / "chunk-1-dataset.json") << R"({"0": {"input_tokens": "{100: 1.0}", "output_tokens": 5}})";
  auto bad = open_workload(workload, 3);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("chunk-1-dataset.json: window 0: output_tokens: expected the text of a dict"),
            std::string::npos)
      << bad.error().message;
}

TEST(ServeGenLengthsTest, RealClientsCarryTheirOwnLengths) {
  const std::string path = testing::shared_path("traces/servegen/m-small");
  MESHSIM_NEED_SHARED_FILE(path);
  auto table = load_servegen(path, ServeGenLengths::kClients);
  ASSERT_TRUE(table) << table.error().message;
  int with_file = 0;
  for (const ClientLengths& c : (*table)->lengths) with_file += c.window_start_s.empty() ? 0 : 1;
  EXPECT_EQ(with_file, 38);  // 38 of the 43 clients have a dataset file
  // Day 12's first hour at 2% of the load, twice: the same requests; lengths within
  // what the files hold and not all one value.
  ServeGenSpec spec;
  spec.path = path;
  spec.load_scale = 0.02;
  WorkloadSpec workload;
  workload.source = spec;
  workload.window_start = SimTime::from_seconds(11 * 86'400.0);
  workload.window_end = SimTime::from_seconds(11 * 86'400.0 + 3600);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs[2];
  for (auto& run : runs) {
    auto source = open_workload(workload, 1);
    ASSERT_TRUE(source) << source.error().message;
    for (;;) {
      auto next = (*source)->next();
      ASSERT_TRUE(next);
      if (!*next) break;
      run.emplace_back((*next)->prompt_tokens, (*next)->output_tokens);
    }
  }
  ASSERT_GT(runs[0].size(), 30'000u);
  EXPECT_EQ(runs[0], runs[1]);
  std::set<std::uint32_t> prompts;
  for (const auto& [prompt, output] : runs[0]) {
    EXPECT_GE(prompt, 1u);
    EXPECT_GE(output, 1u);
    prompts.insert(prompt);
  }
  EXPECT_GT(prompts.size(), 100u);
}

}  // namespace
}  // namespace meshsim::traces
