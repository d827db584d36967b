#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "traces/csv_trace_reader.hpp"
#include "traces/jsonl_trace_reader.hpp"
#include "tests/traces/read_all.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

std::unique_ptr<RequestSource> azure(const std::string& text) {
  return std::make_unique<CsvTraceReader>(std::make_unique<std::istringstream>(text), "azure.csv", text.size(),
                                          preset_mapping(TraceFormat::kAzureCsv, {}));
}

std::unique_ptr<RequestSource> mooncake(const std::string& text) {
  return std::make_unique<JsonlTraceReader>(std::make_unique<std::istringstream>(text), "mc.jsonl", text.size(),
                                            preset_mapping(TraceFormat::kMooncakeJsonl, {}));
}

using testing::ReadAll;
using testing::read_all;

const char* kAzure =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:50.9951690,396,109\n"
    "2023-11-16 18:15:50.9951690,879,55";  // no trailing newline, as in the real file

TEST(AzureReaderTest, ReadsOffsetsFromTheFirstRowAndTokenCounts) {
  auto source = azure(kAzure);
  const auto all = read_all(*source);
  ASSERT_EQ(all.error, "");
  ASSERT_EQ(all.requests.size(), 3u);
  EXPECT_EQ(all.requests[0].arrival, SimTime::zero());
  EXPECT_EQ(all.requests[1].arrival.us(), 4'314'579);
  EXPECT_EQ(all.requests[2].arrival, all.requests[1].arrival);
  EXPECT_EQ(all.requests[1].prompt_tokens, 396u);
  EXPECT_EQ(all.requests[1].output_tokens, 109u);
  EXPECT_EQ(all.requests[2].id, 2u);
  EXPECT_DOUBLE_EQ(source->progress(), 1.0);
}

TEST(AzureReaderTest, AcceptsCrLfBlankLinesAndReorderedColumns) {
  auto source = azure("GeneratedTokens,TIMESTAMP,ContextTokens\r\n\r\n5,2023-11-16 00:00:01,7\r\n\n");
  const auto all = read_all(*source);
  ASSERT_EQ(all.error, "");
  ASSERT_EQ(all.requests.size(), 1u);
  EXPECT_EQ(all.requests[0].prompt_tokens, 7u);
  EXPECT_EQ(all.requests[0].output_tokens, 5u);
}

TEST(AzureReaderTest, EmptyFileIsAnErrorSayingWhatWasExpected) {
  auto source = azure("");
  const auto all = read_all(*source);
  EXPECT_EQ(all.error.rfind("azure.csv: the file is empty: expected a header line naming the columns 'TIMESTAMP'", 0), 0u)
      << all.error;
}

TEST(AzureReaderTest, HeaderWithoutRowsIsAnError) {
  auto source = azure("TIMESTAMP,ContextTokens,GeneratedTokens\n");
  EXPECT_NE(read_all(*source).error.find("azure.csv: no requests in the file"), std::string::npos);
}

TEST(AzureReaderTest, MissingColumnIsNamedWithTheHeaderFound) {
  auto source = azure("TIMESTAMP,ContextTokens\n2023-11-16 00:00:01,7\n");
  EXPECT_EQ(read_all(*source).error,
            "azure.csv:1: header: missing column 'GeneratedTokens' (the header has 'TIMESTAMP', 'ContextTokens')");
}

TEST(AzureReaderTest, NegativeCountGivesFileLineColumnAndExpectedForm) {
  auto source = azure("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:01,7,5\n2023-11-16 00:00:02,-3,5\n");
  const auto all = read_all(*source);
  EXPECT_EQ(all.requests.size(), 1u);
  EXPECT_EQ(all.error,
            "azure.csv:3: column 'ContextTokens': expected a positive integer token count (at most 10000000), got '-3'");
}

TEST(AzureReaderTest, NonNumericCountIsAnError) {
  auto source = azure("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:01,7,many\n");
  EXPECT_EQ(read_all(*source).error,
            "azure.csv:2: column 'GeneratedTokens': expected a positive integer token count (at most 10000000), got "
            "'many'");
}

TEST(AzureReaderTest, BadTimestampAndWrongFieldCountAreErrors) {
  auto bad_time = azure("TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,7,5\n");
  EXPECT_EQ(read_all(*bad_time).error,
            "azure.csv:2: column 'TIMESTAMP': expected a date-time 'YYYY-MM-DD HH:MM:SS[.fraction]', got 'yesterday'");
  auto short_row = azure("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:01,7\n");
  EXPECT_EQ(read_all(*short_row).error, "azure.csv:2: expected 3 fields as in the header, found 2");
}

TEST(AzureReaderTest, UnsortedTimestampsAreAnError) {
  auto source = azure(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:02,7,5\n2023-11-16 00:00:01.5,7,5\n");
  EXPECT_EQ(read_all(*source).error,
            "azure.csv:3: timestamps must not decrease: this row is 500000 us earlier than the row before it");
}

TEST(AzureReaderTest, ErrorsAreSticky) {
  auto source = azure("TIMESTAMP,ContextTokens,GeneratedTokens\nbad,1,1\n2023-11-16 00:00:01,7,5\n");
  EXPECT_FALSE(source->next());
  EXPECT_FALSE(source->next());
}

TEST(MooncakeReaderTest, ReadsMillisecondOffsetsAndKeepsHashIds) {
  auto source = mooncake(
      "{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\n"
      "{\"timestamp\": 1500, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0, 3]}\n");
  const auto all = read_all(*source);
  ASSERT_EQ(all.error, "");
  ASSERT_EQ(all.requests.size(), 2u);
  EXPECT_EQ(all.requests[1].arrival, SimTime::from_ms(1500));
  // hash_ids name 512-token blocks: the first prompt's first three, the second's only
  // (partial) block; an id past the prompt is ignored.
  const auto ids = [](const TraceRequest& r) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
    for (const auto& s : r.prefix) out.emplace_back(s.id, s.tokens);
    return out;
  };
  using Runs = std::vector<std::pair<std::uint64_t, std::uint32_t>>;
  EXPECT_EQ(ids(all.requests[0]), (Runs{{0, 512}, {1, 512}, {2, 512}}));
  EXPECT_EQ(ids(all.requests[1]), (Runs{{0, 10}}));
  EXPECT_EQ(all.requests[0].prompt_tokens, 6758u);
}

TEST(MooncakeReaderTest, MalformedJsonNamesLineAndColumn) {
  auto source = mooncake("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n{\"timestamp\": 1,, }\n");
  const auto all = read_all(*source);
  EXPECT_EQ(all.error.rfind("mc.jsonl:2: column 17: expected a JSON object", 0), 0u) << all.error;
}

// Found by the JSONL fuzzer: a number beyond double range made the JSON parser throw
// out_of_range, which escaped the reader.
TEST(MooncakeReaderTest, NumbersBeyondDoubleRangeAreAnErrorNotACrash) {
  const auto all = read_all(*mooncake("{\"timestamp\": 1E999, \"input_length\": 5, \"output_length\": 5}\n"));
  EXPECT_EQ(all.error.rfind("mc.jsonl:1: expected a JSON object: [json.exception.out_of_range.406] number overflow", 0), 0u)
      << all.error;
}

// Issue 8: a line of 100,000 nested arrays crashed the reader (SIGSEGV), and one long line
// took gigabytes once parsed. Both are errors naming the line.
TEST(MooncakeReaderTest, DeepNestingAndOverlongLinesAreErrorsNotCrashes) {
  const std::string deep = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"x\": " +
                           std::string(100'000, '[') + std::string(100'000, ']') + "}\n";
  EXPECT_EQ(read_all(*mooncake(deep)).error, "mc.jsonl:1: expected a JSON object: nested deeper than 64 levels");
  const std::string nested_ok = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"x\": " +
                                std::string(63, '[') + std::string(63, ']') + "}\n";
  EXPECT_EQ(read_all(*mooncake(nested_ok)).error, "");
  std::string huge = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": [0";
  while (huge.size() <= LineTraceReader::kMaxLineBytes) huge += ",1234567";
  const auto all = read_all(*mooncake("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n" + huge + "]}\n"));
  EXPECT_EQ(all.error.rfind("mc.jsonl:2: line longer than 1048576 bytes (the limit for one row)", 0), 0u) << all.error;
  const auto csv = read_all(*azure("TIMESTAMP,ContextTokens,GeneratedTokens\n" + std::string(2 << 20, '1') + "\n"));
  EXPECT_EQ(csv.error.rfind("azure.csv:2: line longer than 1048576 bytes", 0), 0u) << csv.error;
}

TEST(MooncakeReaderTest, LinesAcrossReadBuffersKeepTheirNumbersAndTheLengthLimitIsExact) {
  // Rows of varied lengths, CRLF and blank lines, over many of the reader's 64 KiB reads.
  std::string text;
  std::uint64_t line = 0;
  for (int i = 0; i < 20'000; ++i) {
    text += "{\"timestamp\": " + std::to_string(i) + ", \"input_length\": " + std::to_string(1 + i % 977) +
            ", \"output_length\": 3, \"hash_ids\": [" + std::string(i % 7, '1') + "]}" + (i % 3 ? "\n" : "\r\n");
    ++line;
    if (i % 11 == 0) {
      text += i % 2 ? "\n" : " \t\r\n";
      ++line;
    }
  }
  text += "{\"timestamp\": 1}\n";
  const auto all = read_all(*mooncake(text));
  ASSERT_EQ(all.requests.size(), 20'000u);
  EXPECT_EQ(all.requests.back().prompt_tokens, 1u + 19'999 % 977);
  EXPECT_EQ(all.requests.back().arrival, SimTime::from_ms(19'999));
  EXPECT_EQ(all.error, "mc.jsonl:" + std::to_string(line + 1) + ": missing key 'input_length'");

  std::string longest = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}";
  longest += std::string(LineTraceReader::kMaxLineBytes - longest.size(), ' ');
  EXPECT_EQ(read_all(*mooncake(longest + "\n" + longest)).requests.size(), 2u);
  EXPECT_EQ(read_all(*mooncake(longest + " \n")).error.rfind("mc.jsonl:1: line longer than", 0), 0u);
}

TEST(MooncakeReaderTest, MissingKeysWrongTypesAndEmptyFilesAreErrors) {
  EXPECT_EQ(read_all(*mooncake("{\"timestamp\": 0, \"input_length\": 5}\n")).error,
            "mc.jsonl:1: missing key 'output_length'");
  EXPECT_EQ(read_all(*mooncake("{\"timestamp\": 0, \"input_length\": \"5\", \"output_length\": 5}\n")).error,
            "mc.jsonl:1: key 'input_length': expected a positive integer token count (at most 10000000), got "
            "'\"5\"'");
  EXPECT_EQ(read_all(*mooncake("{\"timestamp\": 0, \"input_length\": -5, \"output_length\": 5}\n")).error,
            "mc.jsonl:1: key 'input_length': expected a positive integer token count (at most 10000000), got '-5'");
  EXPECT_EQ(read_all(*mooncake("[1, 2]\n")).error, "mc.jsonl:1: expected a JSON object, got '[1,2]'");
  EXPECT_EQ(read_all(*mooncake("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": [-1]}\n"))
                .error,
            "mc.jsonl:1: key 'hash_ids': expected non-negative integer block ids, got '-1'");
  EXPECT_NE(read_all(*mooncake("\n\n")).error.find("mc.jsonl: no requests in the file"), std::string::npos);
  EXPECT_EQ(read_all(*mooncake("{\"timestamp\": 5, \"input_length\": 5, \"output_length\": 5}\n"
                               "{\"timestamp\": 4, \"input_length\": 5, \"output_length\": 5}\n"))
                .error,
            "mc.jsonl:2: timestamps must not decrease: this row is 1000 us earlier than the row before it");
}

TEST(GenericReaderTest, CsvAndJsonlFollowTheColumnMapping) {
  ColumnMapping mapping;
  mapping.arrival = "t";
  mapping.arrival_format = TimeFormat::kSeconds;
  mapping.prompt_tokens = "in";
  mapping.output_tokens = "out";
  const std::string csv = "in,t,out,extra\n10,100.25,3,x\n20,101.0,4,\"y,z\"\n";
  CsvTraceReader csv_reader(std::make_unique<std::istringstream>(csv), "g.csv", csv.size(), mapping);
  auto a = read_all(csv_reader);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(a.requests.size(), 2u);
  EXPECT_EQ(a.requests[1].arrival.us(), 750'000);
  EXPECT_EQ(a.requests[1].prompt_tokens, 20u);

  const std::string jsonl = "{\"t\": 3.0, \"in\": 1, \"out\": 2}\n{\"t\": 3.5, \"in\": 1, \"out\": 2}\n";
  JsonlTraceReader jsonl_reader(std::make_unique<std::istringstream>(jsonl), "g.jsonl", jsonl.size(), mapping);
  auto b = read_all(jsonl_reader);
  ASSERT_EQ(b.error, "");
  EXPECT_EQ(b.requests[1].arrival.us(), 500'000);
}

TEST(ShapedSourceTest, WindowRebasesAndRateScaleCompresses) {
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int s = 0; s < 10; ++s) text += "2023-11-16 00:00:0" + std::to_string(s) + ",1,1\n";
  ShapedSource shaped(azure(text), SimTime::from_seconds(2), SimTime::from_seconds(6), 2.0, std::nullopt);
  const auto all = read_all(shaped);
  ASSERT_EQ(all.error, "");
  ASSERT_EQ(all.requests.size(), 4u);  // seconds 2, 3, 4, 5
  EXPECT_EQ(all.requests[0].id, 2u);
  EXPECT_EQ(all.requests[0].arrival, SimTime::zero());
  EXPECT_EQ(all.requests[3].arrival, SimTime::from_seconds(1.5));

  ShapedSource limited(azure(text), SimTime::zero(), std::nullopt, 1.0, 3);
  EXPECT_EQ(read_all(limited).requests.size(), 3u);
}

// Every window that holds none of the requests (past them, before them, between two) is an
// error naming where they are, never an empty replay (one past them ran to the clock's
// limit and was reported as "the simulated clock would pass 1e12 s"); every window holding
// one yields exactly the requests inside it.
TEST(ShapedSourceTest, AWindowIsEmptyExactlyWhenNoRequestFallsInIt) {
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::vector<int> arrivals{0, 1, 4, 6};  // seconds (the first timestamp is time 0)
  for (const int s : arrivals) text += "2023-11-16 00:00:0" + std::to_string(s) + ",1,1\n";
  for (int from = 0; from < 10; ++from) {
    for (int to = from + 1; to <= 11; ++to) {
      for (const bool open_end : {false, true}) {
        ShapedSource shaped(azure(text), SimTime::from_seconds(from),
                            open_end ? std::nullopt : std::optional(SimTime::from_seconds(to)), 1.0, std::nullopt);
        const auto all = read_all(shaped);
        std::size_t inside = 0;
        for (const int s : arrivals) inside += s >= from && (open_end || s < to);
        const std::string where = std::to_string(from) + ".." + (open_end ? "" : std::to_string(to));
        if (inside == 0) {
          EXPECT_EQ(all.error.rfind("workload.window: no request of ", 0), 0u) << where << ": " << all.error;
          EXPECT_NE(all.error.find(open_end ? "its last arrives at 6 s" : "arrive"), std::string::npos) << all.error;
        } else {
          EXPECT_EQ(all.error, "") << where;
          EXPECT_EQ(all.requests.size(), inside) << where;
        }
      }
    }
  }
}

TEST(OpenWorkloadTest, MissingFileAndBadShapingAreErrors) {
  WorkloadSpec spec;
  spec.source = TraceFileSpec{"/nonexistent/trace.csv", TraceFormat::kAzureCsv, {}};
  auto missing = open_workload(spec, 1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "/nonexistent/trace.csv: cannot open the trace file");
  spec.rate_scale = 0;
  EXPECT_FALSE(open_workload(spec, 1));
}

}  // namespace
}  // namespace meshsim::traces
