// configs/scenarios/mooncake-host-tier.json through `meshsim replay`: with the host tier
// each instance serves from cache (GPU and host hits) nearly what an offline LRU replay of
// the trace's block hashes over the requests it received serves with the room of both
// tiers, never more; without it, the GPUs alone serve far less.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/shared_data.hpp"
#include "tests/sim/offline_lru_replay.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;
using testing::csv_rows;
using testing::fresh_dir;
using testing::slurp;

json replay(const std::string& name, const std::vector<std::string>& sets) {
  const auto dir = fresh_dir(name);
  ReplayCommandOptions options;
  options.config_path = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/mooncake-host-tier.json";
  options.out_dir = dir.string();
  options.sets = sets;
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  json summary = json::parse(slurp(dir / "summary.json"));
  summary["requests_csv"] = slurp(dir / "requests.csv");
  return summary;
}

TEST(HostTierScenarioTest, EachInstanceServesFromCacheNearlyWhatAnLruOfBothTiersWouldAndNeverMore) {
  const std::string path = meshsim::testing::shared_path("traces/mooncake_fast25_conversation.jsonl");
  MESHSIM_NEED_SHARED_FILE(path);
  auto source = traces::open_trace_file(traces::TraceFileSpec{path, traces::TraceFormat::kMooncakeJsonl, {}});
  ASSERT_TRUE(source) << source.error().message;
  std::map<std::uint64_t, traces::TraceRequest> trace;
  for (;;) {
    auto next = (*source)->next();
    ASSERT_TRUE(next) << next.error().message;
    if (!*next) break;
    trace.emplace((*next)->id, std::move(**next));
  }
  const json with = replay("host_tier_on", {});
  const json without = replay("host_tier_off", {"serving.vllm.host_kv=null"});
  ASSERT_TRUE(with["prefix_cache"].contains("host"));
  EXPECT_FALSE(without["prefix_cache"].contains("host"));

  // The requests each instance prefilled, in arrival order.
  std::map<std::string, std::vector<std::pair<std::pair<double, std::uint64_t>, const traces::TraceRequest*>>> arrived;
  for (const auto& row : csv_rows(with["requests_csv"].get<std::string>())) {
    if (row.at("prompt_instance").empty()) continue;  // refused for its length
    const std::uint64_t id = std::stoull(row.at("id"));
    arrived[row.at("prompt_instance")].push_back({{std::stod(row.at("arrival_s")), id}, &trace.at(id)});
  }
  std::map<std::string, std::vector<const traces::TraceRequest*>> received;
  for (auto& [instance, list] : arrived) {
    std::sort(list.begin(), list.end());
    for (const auto& entry : list) received[instance].push_back(entry.second);
  }
  const std::uint64_t gpu_tokens = with["deployment"]["servers"][0]["kv_capacity_tokens_per_instance"].get<std::uint64_t>();
  const double kv_bytes_per_token = with["deployment"]["kv_bytes_per_token"].get<double>();
  const auto host_tokens = static_cast<std::uint64_t>(256.0 * 1024 * 1024 * 1024 / kv_bytes_per_token);
  ASSERT_EQ(received.size(), 4u);
  for (const auto& [instance, requests] : received) {
    const json& counts = with["prefix_cache"]["instances"][std::stoul(instance)];
    const json& gpu_only = without["prefix_cache"]["instances"][std::stoul(instance)];
    const double served = (counts["hit_tokens"].get<double>() + counts["host_hit_tokens"].get<double>()) /
                          counts["queried_tokens"].get<double>();
    const double bound = meshsim::testing::offline_lru_hit_share(requests, (host_tokens + gpu_tokens) / traces::kMooncakeBlockTokens);
    SCOPED_TRACE("instance " + instance + ": served " + std::to_string(served) + ", LRU of both tiers " +
                 std::to_string(bound) + ", GPUs alone " + std::to_string(gpu_only["hit_rate"].get<double>()));
    EXPECT_LE(served, bound);
    EXPECT_GE(served, bound - 0.02);
    EXPECT_GT(served, gpu_only["hit_rate"].get<double>() + 0.05) << "the tier serves what the GPUs alone cannot";
  }
}

}  // namespace
}  // namespace meshsim::cli
