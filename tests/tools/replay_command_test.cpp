#include <gtest/gtest.h>

#include <algorithm>

#include "tests/shared_data.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/sweep_command.hpp"
#include "tools/runs/run_outputs.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::slurp;

TEST(ReplayCommandTest, SameConfigAndSeedGiveByteIdenticalOutputs) {
  std::vector<fs::path> dirs = {fresh_dir("det_a"), fresh_dir("det_b")};
  for (const auto& dir : dirs) {
    ReplayCommandOptions options;
    options.out_dir = dir.string();
    options.until_s = 600;  // ten simulated minutes keep the test quick
    options.quiet = true;
    std::ostringstream out, err;
    ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  }
  for (const char* file : {"summary.json", "requests.csv", "timeseries.csv"}) {
    const auto a = slurp(dirs[0] / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, slurp(dirs[1] / file)) << file << " differs between two identical runs";
  }
  // No temporary files are left behind.
  for (const auto& entry : fs::directory_iterator(dirs[0])) EXPECT_NE(entry.path().extension(), ".tmp");
}

TEST(ReplayCommandTest, ADifferentSeedGivesADifferentRun) {
  std::vector<fs::path> dirs = {fresh_dir("seed_a"), fresh_dir("seed_b")};
  for (std::size_t i = 0; i < 2; ++i) {
    ReplayCommandOptions options;
    options.out_dir = dirs[i].string();
    options.until_s = 60;
    options.seed = std::to_string(100 + i);
    options.quiet = true;
    std::ostringstream out, err;
    ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  }
  EXPECT_NE(slurp(dirs[0] / "requests.csv"), slurp(dirs[1] / "requests.csv"));
}

TEST(ReplayCommandTest, SummaryCountsAddUpAndMatchRequestsCsv) {
  const auto dir = fresh_dir("counts");
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.until_s = 300;
  options.rate_scale = 3.0;  // overload four instances so that requests are still in flight
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  EXPECT_NE(out.str().find("latency (s)"), std::string::npos);
  const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  const auto& r = summary["requests"];
  const auto arrived = r["arrived"].get<std::uint64_t>();
  EXPECT_GT(r["in_flight"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(arrived, r["completed"].get<std::uint64_t>() + r["dropped"].get<std::uint64_t>() +
                         r["in_flight"].get<std::uint64_t>());
  // One CSV row per arrived request, whatever became of it.
  const auto csv = slurp(dir / "requests.csv");
  EXPECT_EQ(static_cast<std::uint64_t>(std::count(csv.begin(), csv.end(), '\n')) - 1, arrived);
  EXPECT_EQ(summary["config"]["workload"]["rate_scale"], 3.0);
  EXPECT_EQ(summary["seed"], 42);
}

TEST(ReplayCommandTest, BadInputsExitWithAClearMessage) {
  const auto dir = fresh_dir("bad");
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.trace = "/nonexistent/trace.csv";
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitBadInput);
  EXPECT_EQ(err.str(), "error: /nonexistent/trace.csv: cannot open the trace file\n");

  options.trace = "trace.parquet";
  std::ostringstream err2;
  EXPECT_EQ(run_replay_command(options, out, err2), kExitBadInput);
  EXPECT_NE(err2.str().find("cannot tell the trace format"), std::string::npos);
}

// Issue 8: numbers out of range ended as internal errors (exit 70), or ran as something
// else (--seed -1 ran as 2^64 - 1). Each is bad input naming the option or key and the
// accepted range.
TEST(ReplayCommandTest, NumbersOutOfRangeAreBadInputNamingTheOptionOrKey) {
  const auto run = [](ReplayCommandOptions options) {
    options.out_dir = fresh_dir("numbers").string();
    options.quiet = true;
    std::ostringstream out, err;
    const int code = run_replay_command(options, out, err);
    return std::pair{code, err.str()};
  };
  const auto expect_bad = [&](const ReplayCommandOptions& options, const std::string& message) {
    const auto [code, err] = run(options);
    EXPECT_EQ(code, kExitBadInput) << err;
    EXPECT_NE(err.find(message), std::string::npos) << err;
  };
  ReplayCommandOptions options;
  for (const double until : {1e13, std::numeric_limits<double>::infinity(), -1.0}) {
    options.until_s = until;
    expect_bad(options, "--until: expected a number of seconds in [0, 1e12]");
  }
  options = {};
  options.rate_scale = 1e-300;
  expect_bad(options, "--rate-scale: expected a factor in [1e-06, 1e+06], got 1e-300");
  options = {};
  for (const char* seed : {"-1", "18446744073709551616", "1e23", "", "7x"}) {
    options.seed = seed;
    expect_bad(options, "--seed: expected an integer in [0, 2^64)");
  }
  options.seed = "18446744073709551615";
  options.until_s = 10;
  EXPECT_EQ(run(options).first, kExitOk);

  auto config = nlohmann::json::parse(slurp(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/default.json"));
  config["workload"]["generator"] = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json";
  const auto with = [&](const std::function<void(nlohmann::json&)>& change) {
    auto changed = config;
    change(changed);
    ReplayCommandOptions o;
    o.config_path = scenario_in_fresh_dir("numbers_config", "s.json", changed.dump()).string();
    o.until_s = 100;
    return o;
  };
  expect_bad(with([](auto& c) { c["slo"]["ttft_ms"] = 1e300; }),
             "slo.ttft_ms: expected a number of milliseconds in [0, 1e15], got 1e+300");
  expect_bad(with([](auto& c) { c["workload"]["rate_scale"] = 1e-300; }), "workload.rate_scale: expected a factor in");
  expect_bad(with([](auto& c) { c["serving"]["batching"]["max_batch_size"] = 1e300; }), "max_batch_size");
  // Figures within range that still price an iteration at centuries fail when met.
  expect_bad(with([](auto& c) { c["serving"]["kv"]["transfer_gb_per_s"] = 1e-15; c["serving"]["start_state"] =
                                    nlohmann::json::array({{{"tag", "prompt"}, {"count", 1}}, {{"tag", "token"}, {"count", 1}}}); }),
             "past the simulated time limit");
  nlohmann::json fixed = {{"serving", {{"kind", "fixed_latency"}, {"prefill_base_ms", 1e14}, {"time_per_output_token_ms", 1e14}}},
                          {"workload", config["workload"]}};
  ReplayCommandOptions o;
  o.config_path = scenario_in_fresh_dir("numbers_fixed", "s.json", fixed.dump()).string();
  expect_bad(o, "the fixed-latency model serves request 0 in");
  fixed["serving"]["prefill_base_ms"] = 1e300;
  o.config_path = scenario_in_fresh_dir("numbers_fixed_huge", "s.json", fixed.dump()).string();
  expect_bad(o, "serving.prefill_base_ms: expected a number of milliseconds in [0, 1e15], got 1e+300");
}

// Issue 8: --trace-events /dev/full (or a symlink) was replaced by a regular file, and
// --trace-events OUT/summary.json left a corrupt summary.json.
TEST(ReplayCommandTest, OutputsNeverReplaceSpecialFilesOrLinksOrEachOther) {
  const auto dir = fresh_dir("outputs");
  fs::create_directories(dir);
  ReplayCommandOptions options;
  options.out_dir = (dir / "run").string();
  options.until_s = 60;
  options.quiet = true;
  const auto run = [&](const std::string& trace_events) {
    options.trace_events = trace_events;
    std::ostringstream out, err;
    const int code = run_replay_command(options, out, err);
    return std::pair{code, err.str()};
  };
  // A special file is written in place, never renamed over.
  EXPECT_EQ(run("/dev/null").first, kExitOk);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  const auto [full_code, full_err] = run("/dev/full");
  EXPECT_EQ(full_code, kExitOutputError);
  EXPECT_EQ(full_err, "error: /dev/full: write failed\n");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  // A symlink is followed: the file it names is replaced, the link stays.
  std::ofstream(dir / "target.json") << "old";
  fs::create_symlink(dir / "target.json", dir / "link.json");
  EXPECT_EQ(run((dir / "link.json").string()).first, kExitOk);
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(slurp(dir / "target.json").rfind("{\"displayTimeUnit\"", 0), 0u);
  // The timeline may not take the place of a run-folder file.
  const std::string summary_before = slurp(dir / "run" / "summary.json");
  const auto [clash_code, clash_err] = run((dir / "run" / "summary.json").string());
  EXPECT_EQ(clash_code, kExitBadInput);
  EXPECT_NE(clash_err.find("is the run folder's summary.json"), std::string::npos) << clash_err;
  EXPECT_EQ(slurp(dir / "run" / "summary.json"), summary_before);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST(FitCommandTest, ATraceWhoseRequestsAllArriveAtOnceHasNoRateToFit) {
  const auto path = scenario_in_fresh_dir("fit_equal", "t.csv",
                                          "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n"
                                          "2023-11-16 18:15:46.68,374,44\n");
  FitCommandOptions options;
  options.trace = path.string();
  std::ostringstream out, err;
  EXPECT_EQ(run_fit_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("every request arrives at the same time"), std::string::npos) << err.str();
  EXPECT_EQ(out.str(), "");
}

TEST(ReplayCommandTest, RealTracesReportEveryArrivedRequestServedOrRefusedForItsLength) {
  const std::string shared = MESHSIM_SHARED_DIR;
  const std::vector<std::pair<std::string, std::uint64_t>> cases = {
      {shared + "/traces/azure2023_conv.csv", 19366}, {shared + "/traces/mooncake_fast25_conversation.jsonl", 12031}};
  for (const auto& [trace, expected] : cases) {
    MESHSIM_NEED_SHARED_FILE(trace);
    const auto dir = fresh_dir("real");
    ReplayCommandOptions options;
    options.out_dir = dir.string();
    options.trace = trace;
    options.quiet = true;
    std::ostringstream out, err;
    ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
    const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
    const auto& requests = summary["requests"];
    EXPECT_EQ(requests["arrived"].get<std::uint64_t>(), expected) << trace;
    // Served, or refused for a length past Llama2-70B's context of 4,096 tokens.
    const auto refused = requests["dropped_for"]["over_context"].get<std::uint64_t>();
    EXPECT_EQ(requests["completed"].get<std::uint64_t>() + refused, expected) << trace;
    EXPECT_EQ(requests["dropped"].get<std::uint64_t>(), refused) << trace;
    std::uint64_t longer = 0;
    for (const auto& row : testing::csv_rows(slurp(dir / "requests.csv"))) {
      longer += std::stoull(row.at("prompt_tokens")) + std::stoull(row.at("output_tokens")) > 4096;
    }
    EXPECT_EQ(longer, refused) << trace;
  }
}

// --set changes the scenario before it is checked, as sweep grids and Python's overrides
// do; the summary records the assignments, and a bad one is refused naming its key.
TEST(ReplayCommandTest, SetAssignmentsChangeTheScenarioAndAreRecorded) {
  const auto dir = fresh_dir("replay_set");
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.quiet = true;
  options.until_s = 120;
  options.sets = {"serving.vllm.prefix_caching=false", "serving.start_state.0.count=2", "slo.ttft_ms=250"};
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  EXPECT_EQ(summary["overrides"], nlohmann::json(options.sets));
  EXPECT_EQ(summary["config"]["serving"]["vllm"]["prefix_caching"], false);
  EXPECT_EQ(summary["config"]["serving"]["start_state"][0]["count"], 2);
  EXPECT_DOUBLE_EQ(summary["slo"]["ttft_target_s"].get<double>(), 0.25);
  EXPECT_FALSE(summary.contains("prefix_cache")) << "prefix caching is off";
  for (const auto& [assignment, words] : std::vector<std::pair<std::string, std::string>>{
           {"serving.vllm.max_num_seqs=-3", "serving.vllm.max_num_seqs: expected a positive integer, got -3"},
           {"serving.start_state.7.count=1", "serving.start_state.7"},
           {"no-equals-sign", "--set: override 'no-equals-sign': expected key.path=value"}}) {
    options.sets = {assignment};
    options.out_dir = (dir / "bad").string();
    std::ostringstream bad_out, bad_err;
    EXPECT_EQ(run_replay_command(options, bad_out, bad_err), kExitBadInput) << assignment;
    EXPECT_NE(bad_err.str().find(words), std::string::npos) << bad_err.str();
  }
}

// A run that finished no request has no latency to report: null in summary.json, '-' on
// the console, no sample in metrics.prom, an empty cell in a sweep (they read 0.0000 s).
TEST(ReplayCommandTest, NoFinishedRequestMeansNoLatencyFigures) {
  const auto dir = fresh_dir("replay_no_latency");
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.until_s = 0.01;  // the first request arrives, and is still in flight
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  ASSERT_EQ(summary["requests"]["completed"], 0);
  for (const char* kind : {"ttft", "tbt", "e2e", "queueing"}) {
    EXPECT_EQ(summary["latency_s"][kind]["count"], 0) << kind;
    for (const char* figure : {"mean", "p50", "p90", "p99", "max"}) {
      EXPECT_TRUE(summary["latency_s"][kind][figure].is_null()) << kind << " " << figure;
    }
  }
  EXPECT_NE(out.str().find("  ttft              -         -         -         -         -\n"), std::string::npos)
      << out.str();
  EXPECT_EQ(slurp(dir / "metrics.prom").find("meshsim_latency_seconds{"), std::string::npos);
  EXPECT_TRUE(read_sweep_run_summary(summary.dump(), "summary.json"));
}

// Issue 8: with folding on, 11,457 of 19,366 rows differed (a prompt over the token budget
// waited behind paused sequences until the next arrival). Now not a byte may differ, in
// either KV allocation mode.
TEST(ReplayCommandTest, FoldingChangesNoByteOfTheOutputsOnARealTrace) {
  const auto trace = meshsim::testing::shared_path("traces/azure2023_conv.csv");
  MESHSIM_NEED_SHARED_FILE(trace);
  auto config = nlohmann::json::parse(slurp(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/default.json"));
  config["workload"]["generator"] = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json";
  for (const char* allocation : {"reserve", "on_demand"}) {
    SCOPED_TRACE(allocation);
    config["serving"]["kv"]["allocation"] = allocation;
    std::map<bool, fs::path> dirs;
    for (const bool fold : {true, false}) {
      config["serving"]["fold_decode"] = fold;
      const auto path = scenario_in_fresh_dir(fold ? "folded" : "unfolded", "scenario.json", config.dump());
      ReplayCommandOptions options;
      options.config_path = path.string();
      options.trace = trace;
      options.out_dir = (path.parent_path() / "out").string();
      options.quiet = true;
      std::ostringstream out, err;
      ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
      dirs[fold] = options.out_dir;
    }
    for (const char* file : {"requests.csv", "timeseries.csv"}) {
      EXPECT_TRUE(slurp(dirs[true] / file) == slurp(dirs[false] / file)) << file << " differs";
    }
  }
}

// Issue 8: Baseline-H100 on the Mooncake trace (long prompts) never ended: one instance's
// KV was held by prefilled sequences waiting for their output reservation.
TEST(ReplayCommandTest, KvStarvedBaselineOnTheMooncakeTraceEnds) {
  const auto trace = meshsim::testing::shared_path("traces/mooncake_fast25_conversation.jsonl");
  MESHSIM_NEED_SHARED_FILE(trace);
  MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("reference/splitwise_perf_model.csv"));
  const auto dir = fresh_dir("mooncake_baseline");
  ReplayCommandOptions options;
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/splitwise-baseline-h100.json";
  options.trace = trace;
  options.out_dir = dir.string();
  options.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  const auto& requests = summary["requests"];
  EXPECT_EQ(requests["arrived"].get<std::uint64_t>(), 12031u);
  EXPECT_EQ(requests["in_flight"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(requests["completed"].get<std::uint64_t>() + requests["dropped"].get<std::uint64_t>(), 12031u);
}


TEST(TraceEventsTest, TimelineIsValidChromeTraceJsonWithOneTrackPerInstance) {
  // A split cluster (prompt and token instances) so that KV transfers appear too.
  const auto config = scenario_in_fresh_dir(
      "timeline", "split.json",
      R"({"workload": {"generator": ")" + std::string(MESHSIM_SOURCE_DIR) +
          R"(/configs/workloads/azure_conv.json", "max_requests": 300},
      "serving": {"model": "llama2-70b", "sku": "h100-80gb", "tensor_parallel": 4,
                  "start_state": [{"tag": "prompt", "count": 2}, {"tag": "token", "count": 2}]}})");
  const auto dir = config.parent_path();
  ReplayCommandOptions options;
  options.config_path = config.string();
  options.out_dir = (dir / "run").string();
  options.trace_events = (dir / "run" / "timeline.json").string();
  options.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto trace = nlohmann::json::parse(slurp(dir / "run" / "timeline.json"));
  std::map<std::pair<int, std::uint64_t>, std::int64_t> track_end;  // complete slices must not overlap
  std::map<std::uint64_t, int> open_transfers;
  int slices = 0, threads = 0;
  for (const auto& event : trace["traceEvents"]) {
    const std::string ph = event["ph"];
    if (ph == "M" && event["name"] == "thread_name") ++threads;
    if (ph == "X") {
      ++slices;
      const auto key = std::make_pair(event["pid"].get<int>(), event["tid"].get<std::uint64_t>());
      const auto ts = event["ts"].get<std::int64_t>();
      EXPECT_GE(event["dur"].get<std::int64_t>(), 1);
      EXPECT_GE(ts, track_end[key]) << "overlapping slices on one track";
      track_end[key] = ts + event["dur"].get<std::int64_t>();
    }
    if (ph == "b") ++open_transfers[event["id"].get<std::uint64_t>()];
    if (ph == "e") --open_transfers[event["id"].get<std::uint64_t>()];
  }
  EXPECT_EQ(threads, 8);  // 4 instances, each with a work track and a kv-in track
  EXPECT_GT(slices, 300);
  EXPECT_EQ(open_transfers.size(), 300u);  // every request was shipped once
  for (const auto& [id, balance] : open_transfers) EXPECT_EQ(balance, 0) << id;
}


TEST(TimeseriesTest, ReportsInstancesByTagAndKvCacheUse) {
  const auto config = scenario_in_fresh_dir(
      "timeseries", "split.yaml",
      "workload:\n  generator: " + std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json\n" +
          "serving:\n  model: llama2-70b\n  tensor_parallel: 4\n" +
          "  start_state: [{tag: prompt, count: 1}, {tag: token, count: 2}, {tag: mixed, count: 1}]\n" +
          "run: {until_s: 120}\n");
  const auto dir = config.parent_path();
  ReplayCommandOptions options;
  options.config_path = config.string();
  options.out_dir = (dir / "run").string();
  options.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  std::istringstream csv(slurp(dir / "run" / "timeseries.csv"));
  std::string line;
  std::getline(csv, line);
  ASSERT_EQ(line, "start_s,end_s,arrivals,completions,drops,queued,running,instances,prompt_instances,"
                  "token_instances,mixed_instances,starting_instances,active_instances,draining_instances,"
                  "inactive_instances,roofline_utilisation,busy_share,kv_used_fraction,output_tokens,serving_gpus,batch_gpus,"
                  "batch_running,batch_queued,batch_preemptions,prefix_queried_tokens,prefix_hit_tokens,"
                  "prefix_hit_rate,prefix_hit_rate_min,prefix_hit_rate_max");
  double most_kv = 0;
  int rows = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    ASSERT_EQ(std::count(line.begin(), line.end(), ','), 28);
    EXPECT_EQ(f[7], "4");
    EXPECT_EQ(f[8], "1");
    EXPECT_EQ(f[9], "2");
    EXPECT_EQ(f[10], "1");
    EXPECT_EQ(f[11], "0");  // no scaling: all four ACTIVE from the start
    EXPECT_EQ(f[12], "4");
    EXPECT_EQ(f[13], "0");
    EXPECT_EQ(f[14], "0");
    const double kv = std::stod(f[17]);
    EXPECT_GE(kv, 0.0);
    EXPECT_LE(kv, 1.0);
    most_kv = std::max(most_kv, kv);
    ++rows;
  }
  EXPECT_EQ(rows, 12);
  EXPECT_GT(most_kv, 0.0);
}

// Under prefix caching the hit rates reach both outputs and agree: a shared-prefix
// workload (4 system prompts of 800 tokens) on two instances, routed by prefix_affinity;
// the intervals' lookups add up to summary.json's, and its instances' to its total.
TEST(TimeseriesTest, PrefixCacheHitRatesAddUpPerIntervalAndPerInstance) {
  const auto config = scenario_in_fresh_dir(
      "prefix_hits", "vllm.yaml",
      "workload:\n  generator:\n    arrivals: {kind: constant, rate_per_s: 4}\n"
      "    prompt_tokens: {kind: fixed, value: 200}\n    output_tokens: {kind: fixed, value: 50}\n"
      "    shared_prefix: {system_prompts: 4, users_per_system_prompt: 8, system_prompt_tokens: 800}\n"
      "    duration_s: 120\n"
      "serving:\n  model: meta-llama/Llama-2-7b-hf\n  sku: H100-SXM-80GB\n  tensor_parallel: 1\n"
      "  backend: step_model\n  scheduler: vllm\n  start_state: [{tag: mixed, count: 2}]\n"
      "  routing: {prompt: prefix_affinity, token: fewest_requests}\n");
  const auto dir = config.parent_path();
  ReplayCommandOptions options;
  options.config_path = config.string();
  options.out_dir = (dir / "run").string();
  options.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
  const auto& prefix = summary.at("prefix_cache");
  const auto queried = prefix.at("queried_tokens").get<std::uint64_t>();
  const auto hit = prefix.at("hit_tokens").get<std::uint64_t>();
  // Each request's 800 shared tokens hit once its prompt is cached: most of 1,000.
  EXPECT_GT(prefix.at("hit_rate").get<double>(), 0.7);
  ASSERT_EQ(prefix.at("instances").size(), 2u);
  std::uint64_t instance_hits = 0;
  for (const auto& instance : prefix.at("instances")) instance_hits += instance.at("hit_tokens").get<std::uint64_t>();
  EXPECT_EQ(instance_hits, hit);
  std::istringstream csv(slurp(dir / "run" / "timeseries.csv"));
  std::string line;
  std::getline(csv, line);
  std::uint64_t row_queried = 0, row_hit = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line + ",");
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 29u);
    row_queried += std::stoull(f[24]);
    row_hit += std::stoull(f[25]);
    if (f[24] == "0") continue;
    EXPECT_LE(std::stod(f[27]), std::stod(f[26]) + 1e-6);  // min <= interval rate <= max
    EXPECT_LE(std::stod(f[26]), std::stod(f[28]) + 1e-6);
  }
  EXPECT_EQ(row_queried, queried);
  EXPECT_EQ(row_hit, hit);
}

// Utilisation is two figures, each named for what it is: the work done at the GPUs' peak
// FLOPs or bandwidth (roofline) and the share of time an iteration ran (busy).
TEST(ReplayCommandTest, UtilisationIsSplitIntoRooflineAndBusyShares) {
  struct Run {
    nlohmann::json summary;
    std::string console;
  };
  const auto replay = [](double rate_scale) {
    const auto dir = fresh_dir("utilisation_" + std::to_string(rate_scale));
    ReplayCommandOptions options;
    options.out_dir = dir.string();
    options.rate_scale = rate_scale;
    options.until_s = 900;
    std::ostringstream out, err;
    EXPECT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
    return Run{nlohmann::json::parse(slurp(dir / "summary.json")), out.str()};
  };
  const Run idle = replay(0.01);   // ~50 requests in 15 minutes on 4 instances
  const Run light = replay(0.1);   // about one request per instance at a time
  const Run loaded = replay(1.0);  // batches of tens of sequences
  const Run overloaded = replay(40.0);
  const auto roofline = [](const Run& r) { return r.summary["roofline_utilisation"].get<double>(); };
  const auto busy = [](const Run& r) { return r.summary["busy_share"].get<double>(); };
  EXPECT_GT(roofline(idle), 0.0);
  EXPECT_LT(roofline(idle), 0.05);
  EXPECT_GT(roofline(light), 4 * roofline(idle));
  EXPECT_GT(roofline(loaded), roofline(light));
  EXPECT_LT(roofline(overloaded), 1.0);
  // Busy: an instance decoding one request at a time is busy all along.
  EXPECT_LT(busy(idle), 0.5);
  EXPECT_GT(busy(loaded), 0.9);
  for (const Run* r : {&idle, &light, &loaded, &overloaded}) {
    EXPECT_GE(busy(*r), roofline(*r));  // work is only done while busy
    EXPECT_LE(busy(*r), 1.0);
    EXPECT_EQ(r->summary.contains("utilisation"), false) << "one name per figure";
    EXPECT_NE(r->console.find("GPUs        busy "), std::string::npos) << r->console;
  }
  // The overload verdict: in summary.json always, on the console when overloaded.
  EXPECT_FALSE(loaded.summary["overload"]["overloaded"].get<bool>());
  EXPECT_EQ(loaded.console.find("WARNING"), std::string::npos) << loaded.console;
  const auto& o = overloaded.summary["overload"];
  EXPECT_TRUE(o["overloaded"].get<bool>());
  EXPECT_GT(o["arrival_rate"].get<double>(), 2 * o["departure_rate"].get<double>());
  EXPECT_GT(o["backlog_after"].get<std::uint64_t>(), o["backlog_before"].get<std::uint64_t>());
  EXPECT_NE(overloaded.console.find("WARNING     overloaded: "), std::string::npos) << overloaded.console;
}

// A percentage in the console never rounds up to 100% (issue 26: 99.985% read "100.0%").
TEST(ReplayCommandTest, TheConsoleNeverRoundsAShareUpTo100Percent) {
  const auto dir = fresh_dir("never_100");
  ReplayCommandOptions options;
  options.out_dir = dir.string();
  options.until_s = 60;
  options.quiet = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  auto summary = nlohmann::ordered_json::parse(slurp(dir / "summary.json"));
  summary["slo"]["attainment"] = 0.99985;
  const std::string table = format_summary_table(summary);
  EXPECT_NE(table.find("SLO         99.9% met"), std::string::npos) << table;
}

}  // namespace
}  // namespace meshsim::cli
