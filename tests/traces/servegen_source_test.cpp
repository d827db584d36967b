#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "sim/engine/rng.hpp"
#include "tests/shared_data.hpp"
#include "traces/episode_workload.hpp"
#include "traces/servegen_source.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

namespace fs = std::filesystem;

// A fresh folder of client files, each given as its rows.
std::string write_clients(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path folder = fs::temp_directory_path() / ("meshsim_servegen_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  for (const auto& [file, rows] : files) std::ofstream(folder / file) << rows;
  return folder.string();
}

ServeGenSpec spec_for(const std::string& path, double load_scale = 1.0) {
  ServeGenSpec spec;
  spec.path = path;
  spec.load_scale = load_scale;
  spec.lengths = ServeGenLengths::kModel;
  spec.prompt_tokens = LengthSpec{LengthSpec::Kind::kUniform, 1, 10, 2000, {}};
  spec.output_tokens = LengthSpec{LengthSpec::Kind::kUniform, 1, 5, 500, {}};
  return spec;
}

std::vector<TraceRequest> drain(RequestSource& source) {
  std::vector<TraceRequest> out;
  for (;;) {
    auto next = source.next();
    EXPECT_TRUE(next) << next.error().message;
    if (!next || !next->has_value()) return out;
    out.push_back(std::move(**next));
  }
}

std::shared_ptr<const ServeGenTable> load(const std::string& path) {
  auto table = load_servegen(path);
  EXPECT_TRUE(table) << table.error().message;
  return table ? *table : nullptr;
}

std::string error_of(const std::string& path) {
  auto table = load_servegen(path);
  return table ? std::string("(loaded)") : table.error().message;
}

TEST(ServeGenSourceTest, BadFilesAreRefusedNamingFileLineAndWhatWasExpected) {
  const auto check = [](const std::string& name, const std::string& rows, const std::string& expected) {
    const std::string folder = write_clients(name, {{"chunk-0-trace.csv", rows}});
    const std::string message = error_of(folder);
    EXPECT_NE(message.find(folder + "/chunk-0-trace.csv:"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  };
  check("fields", "0,1,1,Gamma,1,1\n600,1,1,Gamma,1\n", ":2: expected 6 fields");
  check("pattern", "0,1,1,Gamma,1,1\n600,1,1,Poisson,1,1\n", ":2: pattern: expected Gamma, Weibull or nothing");
  check("nolaw", "0,0,0,,0,0\n600,2.5,1,,0,0\n", ":2: pattern: a window with requests (rate_per_s 2.5)");
  check("shape", "0,1,1,Weibull,0,1\n", ":1: shape: expected a positive number");
  check("rate", "0,-1,1,Gamma,1,1\n", ":1: rate_per_s: expected a rate in [0, 1e5]");
  // A rate that would never end (1e8/s) or overflow a window's count (1e19/s).
  check("huge_rate", "0,1e8,1,Gamma,1,1\n", ":1: rate_per_s: expected a rate in [0, 1e5], got '1e8'");
  check("overflowing_rate", "0,1e19,1,Gamma,1,1\n", ":1: rate_per_s: expected a rate in [0, 1e5]");
  check("steps", "0,1,1,Gamma,1,1\n600,1,1,Gamma,1,1\n1300,1,1,Gamma,1,1\n", ":3: timestamp_s: expected 1200");
  check("text", "0,1,1,Gamma,1,1\nabc,1,1,Gamma,1,1\n", ":2: timestamp_s: expected seconds");
  // A window file that is a symbolic link to itself is named (it escaped as exit 70).
  const std::string looped = write_clients("looped", {{"chunk-0-trace.csv", "0,1,1,Gamma,1,1\n"}});
  std::filesystem::create_symlink("chunk-1-trace.csv", std::filesystem::path(looped) / "chunk-1-trace.csv");
  const auto loop = load_servegen(looped, ServeGenLengths::kClients);
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message.find("chunk-1-trace.csv: cannot be read"), std::string::npos) << loop.error().message;

  const std::string mixed = write_clients("mixed", {{"chunk-0-trace.csv", "0,1,1,Gamma,1,1\n600,1,1,Gamma,1,1\n"},
                                                   {"chunk-1-trace.csv", "0,1,1,Gamma,1,1\n300,1,1,Gamma,1,1\n"}});
  EXPECT_NE(error_of(mixed).find("chunk-1-trace.csv: windows of 300 s where the others have 600 s"), std::string::npos)
      << error_of(mixed);
  const std::string shifted = write_clients("shifted", {{"chunk-0-trace.csv", "0,1,1,Gamma,1,1\n600,1,1,Gamma,1,1\n"},
                                                       {"chunk-1-trace.csv", "600,1,1,Gamma,1,1\n1200,1,1,Gamma,1,1\n"}});
  EXPECT_NE(error_of(shifted).find("the first window starts at 600 s"), std::string::npos) << error_of(shifted);
  EXPECT_NE(error_of("/nonexistent/servegen").find("no such folder or file"), std::string::npos);
  EXPECT_NE(error_of(write_clients("empty", {{"notes.txt", "x"}})).find("no ServeGen window files"), std::string::npos);
}

TEST(ServeGenSourceTest, ClientsAreInChunkNumberOrderAndRequestsInTheirWindows) {
  // Client 10 sends 3 requests in window 1; client 2 sends 2 in window 0 and 1 in window 2.
  const std::string folder =
      write_clients("order", {{"chunk-10-trace.csv", "0,0,0,,0,0\n10,0.3,1,Gamma,1,5\n20,0,0,,0,0\n"},
                              {"chunk-2-trace.csv", "0,0.2,2,Weibull,0.5,3\n10,0,0,,0,0\n20,0.1,1,Gamma,2,1\n"}});
  const auto table = load(folder);
  ASSERT_TRUE(table);
  EXPECT_EQ(table->client_names, (std::vector<std::string>{"chunk-2-trace.csv", "chunk-10-trace.csv"}));
  EXPECT_DOUBLE_EQ(table->window_s, 10.0);
  EXPECT_DOUBLE_EQ(table->span_s(), 30.0);
  EXPECT_DOUBLE_EQ(table->expected_requests(0, 30, 1.0), 6.0);
  EXPECT_DOUBLE_EQ(table->expected_requests(5, 15, 2.0), 2 * (0.2 * 5 + 0.3 * 5));

  ServeGenSource source(table, spec_for(folder), 7);
  const auto requests = drain(source);
  ASSERT_EQ(requests.size(), 6u);  // whole expected counts: no rounding draw
  std::vector<int> per_window(3, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].id, i);
    if (i > 0) {
      EXPECT_LE(requests[i - 1].arrival, requests[i].arrival);
    }
    const double t = requests[i].arrival.seconds();
    ASSERT_GE(t, 0.0);
    ASSERT_LE(t, 30.0);
    ++per_window[std::min(2, static_cast<int>(t / 10.0))];
    EXPECT_GE(requests[i].prompt_tokens, 10u);
    EXPECT_LE(requests[i].output_tokens, 500u);
  }
  EXPECT_EQ(per_window, (std::vector<int>{2, 3, 1}));
}

// Classes of service by client: a named client's requests are its class's, the others the
// class naming none; a name the table lacks, or a client no class takes, is refused.
TEST(ServeGenSourceTest, EachClientsRequestsFallIntoItsClassOfService) {
  // Client 10 sends only in window 1 ([10, 20) s), client 2 in windows 0 and 2.
  const std::string folder =
      write_clients("classes", {{"chunk-10-trace.csv", "0,0,0,,0,0\n10,0.3,1,Gamma,1,5\n20,0,0,,0,0\n"},
                                {"chunk-2-trace.csv", "0,0.2,2,Weibull,0.5,3\n10,0,0,,0,0\n20,0.1,1,Gamma,2,1\n"}});
  const auto table = load(folder);
  ASSERT_TRUE(table);
  ServeGenSpec spec = spec_for(folder);
  spec.client_classes = {{"chunk-10", 1}};
  spec.other_class = 0;
  ServeGenSource source(table, spec, 7);
  const auto requests = drain(source);
  ASSERT_EQ(requests.size(), 6u);
  for (const auto& r : requests) {
    const bool client_10 = r.arrival.seconds() >= 10 && r.arrival.seconds() < 20;
    EXPECT_EQ(r.service_class, client_10 ? 1 : 0) << r.arrival.seconds();
  }
  ServeGenSpec unknown = spec;
  unknown.client_classes = {{"chunk-7", 1}};
  auto refused = classes_by_client(*table, unknown);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no client 'chunk-7' for its class of service (clients: chunk-2, chunk-10)"),
            std::string::npos)
      << refused.error().message;
  ServeGenSpec orphan = spec;
  orphan.other_class.reset();
  refused = classes_by_client(*table, orphan);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("client 'chunk-2' is in no class of service"), std::string::npos)
      << refused.error().message;
}

// The requests from any start are the tail of the replay from time 0: windows are drawn
// from their own streams, so a replay can open a test day without drawing the days before.
TEST(ServeGenSourceTest, OpeningAnywhereYieldsTheSameRequestsAsReplayingFromTheStart) {
  engine::Rng rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::pair<std::string, std::string>> files;
    const int clients = 1 + static_cast<int>(rng.uniform_int(5));
    for (int c = 0; c < clients; ++c) {
      std::string rows;
      for (int w = 0; w < 8; ++w) {
        const double rate = rng.uniform() < 0.3 ? 0.0 : rng.uniform() * 3.0;
        const bool gamma = rng.uniform() < 0.5;
        const double shape = std::exp(rng.uniform() * 6.0 - 4.0);  // 0.018 to 7.4: tiny shapes make bursts
        rows += std::to_string(w * 60) + "," + std::to_string(rate) + ",1," +
                (rate > 0 ? (gamma ? "Gamma," : "Weibull,") + std::to_string(shape) + ",2\n" : std::string(",0,0\n"));
      }
      files.emplace_back("chunk-" + std::to_string(c) + "-trace.csv", rows);
    }
    const std::string folder = write_clients("tail", files);
    const auto table = load(folder);
    ASSERT_TRUE(table);
    const double load_scale = 0.5 + rng.uniform() * 2.0;
    ServeGenSource whole_source(table, spec_for(folder, load_scale), 3);
    const auto whole = drain(whole_source);
    const double start = rng.uniform() * 500.0;
    ServeGenSource tail_source(table, spec_for(folder, load_scale), 3, start);
    const auto tail = drain(tail_source);
    std::size_t first = 0;
    // (An arrival within half a microsecond of the start could fall either way; the seeds
    // here have none.)
    while (first < whole.size() && whole[first].arrival < SimTime::from_seconds(start)) ++first;
    ASSERT_EQ(tail.size(), whole.size() - first) << "trial " << trial << " start " << start;
    for (std::size_t i = 0; i < tail.size(); ++i) {
      EXPECT_EQ(tail[i].arrival, whole[first + i].arrival) << "trial " << trial << " request " << i;
      EXPECT_EQ(tail[i].prompt_tokens, whole[first + i].prompt_tokens);
      EXPECT_EQ(tail[i].output_tokens, whole[first + i].output_tokens);
    }
  }
}

// A workload window over ServeGen data yields exactly the requests a replay from time 0 has
// inside it, rebased to the window's start, and is refused exactly when it holds none: before
// the data, in a quiet stretch or past the data's end (a window past the end once replayed
// nothing and was blamed on the clock's limit, because the source opens itself at the
// window and never shows the requests it passed).
TEST(ServeGenSourceTest, AWindowYieldsTheUnfoldedReplaysRequestsInsideItOrIsRefused) {
  engine::Rng rng(29);
  int refused = 0, past_the_data = 0, played = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::pair<std::string, std::string>> files;
    const int clients = 1 + static_cast<int>(rng.uniform_int(3));
    for (int c = 0; c < clients; ++c) {
      std::string rows;
      for (int w = 0; w < 6; ++w) {
        const double rate = rng.uniform() < 0.5 ? 0.0 : rng.uniform() * 0.2;
        rows += std::to_string(w * 60) + "," + std::to_string(rate) + ",1," +
                (rate > 0 ? std::string("Gamma,0.5,2\n") : std::string(",0,0\n"));
      }
      files.emplace_back("chunk-" + std::to_string(c) + "-trace.csv", rows);
    }
    const std::string folder = write_clients("window", files);
    const auto table = load(folder);
    ASSERT_TRUE(table);
    ServeGenSource whole_source(table, spec_for(folder), 5);
    const auto whole = drain(whole_source);
    const double from = std::floor(rng.uniform() * 450.0);
    const bool open_end = rng.uniform() < 0.4;
    const double to = from + 1 + std::floor(rng.uniform() * 120.0);
    WorkloadSpec workload;
    workload.source = spec_for(folder);
    workload.window_start = SimTime::from_seconds(from);
    if (!open_end) workload.window_end = SimTime::from_seconds(to);
    auto source = open_workload(workload, 5);
    ASSERT_TRUE(source) << source.error().message;
    std::vector<TraceRequest> inside;
    for (const auto& request : whole) {
      if (request.arrival >= workload.window_start && (open_end || request.arrival < *workload.window_end)) {
        inside.push_back(request);
      }
    }
    std::vector<TraceRequest> got;
    std::string error;
    for (;;) {
      auto next = (*source)->next();
      if (!next) {
        error = next.error().message;
        break;
      }
      if (!next->has_value()) break;
      got.push_back(std::move(**next));
    }
    const std::string where = "trial " + std::to_string(trial) + " window " + std::to_string(from) + ".." +
                              (open_end ? std::string() : std::to_string(to));
    if (inside.empty()) {
      ++refused;
      EXPECT_EQ(error.rfind("workload.window: no request of servegen:", 0), 0u) << where << ": " << error;
      if (from >= table->span_s()) {
        ++past_the_data;
        EXPECT_NE(error.find("its data ends at 360 s"), std::string::npos) << where << ": " << error;
      }
      continue;
    }
    ++played;
    ASSERT_EQ(error, "") << where;
    ASSERT_EQ(got.size(), inside.size()) << where;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].arrival, inside[i].arrival - workload.window_start) << where << " request " << i;
      EXPECT_EQ(got[i].prompt_tokens, inside[i].prompt_tokens) << where;
    }
  }
  EXPECT_GT(refused, 5);
  EXPECT_GT(past_the_data, 2);
  EXPECT_GT(played, 10);
}

// A window's count is its rate times its length in expectation, and its gaps keep the law's
// burstiness: Gamma of shape k has a coefficient of variation of 1/sqrt(k).
TEST(ServeGenSourceTest, WindowsHoldTheirRateOnAverageAndTheLawsBurstiness) {
  const std::string sparse = write_clients("count", {{"chunk-0-trace.csv", "0,0.37,1,Gamma,0.25,1\n100,0,0,,0,0\n"}});
  const auto sparse_table = load(sparse);
  ASSERT_TRUE(sparse_table);
  const int seeds = 400;
  std::uint64_t whole = 0, half = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    ServeGenSource source(sparse_table, spec_for(sparse), static_cast<std::uint64_t>(seed));
    whole += drain(source).size();
    ServeGenSource halved(sparse_table, spec_for(sparse, 0.5), static_cast<std::uint64_t>(seed));
    half += drain(halved).size();
  }
  EXPECT_NEAR(static_cast<double>(whole) / seeds, 37.0, 0.01);
  EXPECT_NEAR(static_cast<double>(half) / seeds, 18.5, 0.1);  // a fractional expectation, met on average

  const std::string dense = write_clients("cv", {{"chunk-0-trace.csv", "0,200,1,Gamma,4,9\n100,0,0,,0,0\n"}});
  const auto dense_table = load(dense);
  ASSERT_TRUE(dense_table);
  std::vector<double> gaps;
  for (int seed = 0; seed < 20; ++seed) {
    ServeGenSource source(dense_table, spec_for(dense), static_cast<std::uint64_t>(seed));
    const auto requests = drain(source);
    ASSERT_EQ(requests.size(), 20'000u);
    for (std::size_t i = 1; i < requests.size(); ++i) {
      gaps.push_back((requests[i].arrival - requests[i - 1].arrival).seconds());
    }
  }
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  double squares = 0.0;
  for (const double g : gaps) squares += (g - mean) * (g - mean);
  const double cv = std::sqrt(squares / static_cast<double>(gaps.size())) / mean;
  EXPECT_NEAR(mean, 100.0 / 20'001.0, 1e-4);
  EXPECT_NEAR(cv, 0.5, 0.03);
}

// Episodes open ServeGen windows on demand; they must see what a replay of the whole shaped
// workload held in memory holds in the same window, an empty window included (windows 8
// to 11 are a gap in every client's data: an episode there once failed its source).
TEST(ServeGenSourceTest, EpisodeWindowsOpenedOnDemandMatchTheWorkloadHeldInMemory) {
  engine::Rng rng(5);
  std::vector<std::pair<std::string, std::string>> files;
  for (int c = 0; c < 3; ++c) {
    std::string rows;
    for (int w = 0; w < 20; ++w) {
      if (w >= 8 && w < 12) {
        rows += std::to_string(w * 30) + ",0,0,,0,0\n";
        continue;
      }
      rows += std::to_string(w * 30) + "," + std::to_string(rng.uniform() * 4.0) + ",1,Gamma," +
              std::to_string(0.2 + rng.uniform()) + ",1\n";
    }
    files.emplace_back("chunk-" + std::to_string(c) + "-trace.csv", rows);
  }
  const std::string folder = write_clients("episodes", files);
  WorkloadSpec spec;
  spec.source = spec_for(folder, 0.7);
  spec.window_start = SimTime::from_seconds(95);
  spec.window_end = SimTime::from_seconds(480);
  spec.rate_scale = 1.5;
  auto on_demand = open_episode_workload(spec, 9);
  ASSERT_TRUE(on_demand) << on_demand.error().message;
  auto source = open_workload(spec, 9);
  ASSERT_TRUE(source);
  const auto memory = in_memory(*load_trace(**source));
  EXPECT_NEAR((*on_demand)->span_s(), 385.0 / 1.5, 1e-9);
  EXPECT_NEAR((*on_demand)->requests(), memory->requests(), 0.1 * memory->requests());
  int empty = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const SimTime start = SimTime::from_us(static_cast<std::int64_t>(rng.uniform() * 250e6));
    const SimTime length = SimTime::from_us(static_cast<std::int64_t>(1e6 + rng.uniform() * 100e6));
    const double rate_scale = 0.5 + rng.uniform() * 2.0;
    const auto expected = drain(*memory->window(start, length, rate_scale));
    const auto got = drain(*(*on_demand)->window(start, length, rate_scale));
    ASSERT_EQ(got.size(), expected.size()) << "trial " << trial;
    empty += got.empty();
    for (std::size_t i = 0; i < got.size(); ++i) {
      // (Either path rounds to microseconds at each scaling: a few apart at most.)
      EXPECT_LE(std::abs((got[i].arrival - expected[i].arrival).us()), 3) << "trial " << trial << " request " << i;
      EXPECT_EQ(got[i].prompt_tokens, expected[i].prompt_tokens);
      EXPECT_EQ(got[i].output_tokens, expected[i].output_tokens);
    }
  }
  EXPECT_GT(empty, 0);  // the draw reached the gap
}

TEST(ServeGenSourceTest, WorkloadWindowOpensTheDayAskedForAndScalesTheLoad) {
  const std::string path = testing::shared_path("traces/servegen/m-small");
  MESHSIM_NEED_SHARED_FILE(path);
  const auto table = load(path);
  ASSERT_TRUE(table);
  EXPECT_EQ(table->clients.size(), 43u);
  EXPECT_DOUBLE_EQ(table->window_s, 600.0);
  EXPECT_DOUBLE_EQ(table->span_s(), 14 * 86'400.0);
  // Day 12's first hour at 2% of the load: about 20 req/s.
  WorkloadSpec workload;
  workload.source = spec_for(path, 0.02);
  workload.window_start = SimTime::from_seconds(11 * 86'400.0);
  workload.window_end = SimTime::from_seconds(11 * 86'400.0 + 3600);
  auto source = open_workload(workload, 1);
  ASSERT_TRUE(source) << source.error().message;
  const auto requests = drain(**source);
  const double expected = table->expected_requests(11 * 86'400.0, 11 * 86'400.0 + 3600, 0.02);
  EXPECT_NEAR(static_cast<double>(requests.size()), expected, 0.01 * expected);
  EXPECT_GT(expected / 3600, 10.0);
  ASSERT_FALSE(requests.empty());
  EXPECT_GE(requests.front().arrival, SimTime::zero());
  EXPECT_LT(requests.back().arrival, SimTime::from_seconds(3600));
}

}  // namespace
}  // namespace meshsim::traces
