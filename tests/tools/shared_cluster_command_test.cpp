// `meshsim replay` on a shared cluster: serving instances and batch jobs on fixed nodes
// under the scheduling core. The shipped scenarios run end to end (the real traces when
// ../shared is there), the batch counts add up, the time series carries the batch
// columns, and a bad "cluster" object is refused naming its key.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <sstream>
#include <vector>

#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/run_outputs.hpp"

namespace meshsim::cli {
namespace {

using testing::fresh_dir;
using testing::scenario_in_fresh_dir;
using testing::slurp;

struct Replayed {
  int code = 0;
  std::string out, err;
  nlohmann::json summary;
  std::string timeseries;
  std::string prometheus;  // metrics.prom
  nlohmann::json timeline;  // --trace-events, when asked for
};

Replayed replay(const std::string& config_path, const std::string& name, bool timeline = false,
                bool scaling_log = false, std::optional<double> rate_scale = std::nullopt) {
  ReplayCommandOptions options;
  options.rate_scale = rate_scale;
  options.scaling_log = scaling_log;
  options.config_path = config_path;
  options.out_dir = fresh_dir(name).string();
  if (timeline) options.trace_events = fresh_dir(name + "_timeline").string() + ".json";
  options.quiet = true;
  std::ostringstream out, err;
  Replayed r;
  r.code = run_replay_command(options, out, err);
  r.out = out.str();
  r.err = err.str();
  if (r.code == kExitOk) {
    r.summary = nlohmann::json::parse(slurp(options.out_dir + "/summary.json"));
    r.timeseries = slurp(options.out_dir + "/timeseries.csv");
    r.prometheus = slurp(options.out_dir + "/metrics.prom");
    if (timeline) r.timeline = nlohmann::json::parse(slurp(*options.trace_events));
  }
  return r;
}

void expect_batch_adds_up(const nlohmann::json& batch) {
  const auto& jobs = batch["jobs"];
  EXPECT_EQ(jobs["arrived"].get<std::uint64_t>(),
            jobs["completed"].get<std::uint64_t>() + jobs["running"].get<std::uint64_t>() +
                jobs["stopping"].get<std::uint64_t>() + jobs["queued"].get<std::uint64_t>() +
                jobs["failed"].get<std::uint64_t>());
  const auto& g = batch["gpu_hours"];
  EXPECT_NEAR(g["held"].get<double>(),
              g["useful"].get<double>() + g["lost"].get<double>() + g["in_progress"].get<double>(), 1e-9);
  EXPECT_GE(g["in_progress"].get<double>(), -1e-9);
  EXPECT_EQ(batch["preemptions"].get<std::uint64_t>(),
            batch["requeues"].get<std::uint64_t>() + jobs["stopping"].get<std::uint64_t>());
}

TEST(SharedClusterCommandTest, TheSyntheticSharedClusterScalesServingAndPreemptsBatchWork) {
  const Replayed r =
      replay(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json", "shared_synthetic",
             /*timeline=*/true);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto& batch = r.summary["batch"];
  expect_batch_adds_up(batch);
  EXPECT_GT(batch["jobs"]["arrived"].get<int>(), 5000);
  EXPECT_GT(batch["preemptions"].get<int>(), 0);
  EXPECT_GT(batch["preemptions_by_reason"]["cross_pool_preemption"].get<int>(), 0);
  EXPECT_GT(r.summary["scaling"]["scale_ups"].get<int>(), 0);
  // Only requests longer than Llama2-70B's context are dropped (refused at arrival).
  EXPECT_EQ(r.summary["requests"]["dropped"], r.summary["requests"]["dropped_for"]["over_context"]);
  // The time series shows batch work beside the serving GPUs.
  std::istringstream rows(r.timeseries);
  std::string line;
  std::getline(rows, line);
  EXPECT_NE(line.find("serving_gpus,batch_gpus,batch_running,batch_queued,batch_preemptions"), std::string::npos);
  double most_batch_gpus = 0;
  for (const auto& row : testing::csv_rows(r.timeseries)) {
    const double serving = std::stod(row.at("serving_gpus")), batch_gpus = std::stod(row.at("batch_gpus"));
    most_batch_gpus = std::max(most_batch_gpus, batch_gpus);
    EXPECT_LE(serving + batch_gpus, 40.0 + 1e-9);  // 5 nodes of 8 GPUs
  }
  EXPECT_GT(most_batch_gpus, 10.0);
  // metrics.prom: the run's figures and the core's schedulemesh_* metrics.
  const std::string& prom = r.prometheus;
  EXPECT_NE(prom.find("meshsim_batch_jobs{state=\"completed\"} " +
                      std::to_string(batch["jobs"]["completed"].get<std::uint64_t>())),
            std::string::npos);
  EXPECT_NE(prom.find("schedulemesh_preemption_count{pool=\"batch\",reason=\"cross_pool_preemption\"}"),
            std::string::npos);
  EXPECT_NE(prom.find("schedulemesh_task_schedule_latency_ms_bucket"), std::string::npos);
  // Who preempted whom, by class, adds up to the preemptions.
  std::uint64_t by_class = 0;
  for (const auto& [preemptor, victims] : batch["preempted_by"].items()) {
    for (const auto& [victim, n] : victims.items()) {
      by_class += n.get<std::uint64_t>();
      EXPECT_NE(prom.find("meshsim_batch_preemptions_total{preemptor=\"" + preemptor + "\",victim=\"" + victim +
                          "\"} " + std::to_string(n.get<std::uint64_t>())),
                std::string::npos);
    }
  }
  EXPECT_EQ(by_class, batch["preemptions"].get<std::uint64_t>());
  EXPECT_GT(batch["preempted_by"]["serving"].size(), 0u);
  // The timeline marks every preemption on the node it happened on.
  int preempted = 0;
  for (const auto& event : r.timeline["traceEvents"]) preempted += event["name"] == "preempted";
  EXPECT_EQ(preempted, batch["preemptions"].get<int>());
}

// A rate scale compresses the serving workload, not the run: the batch jobs all arrive
// and run to the scenario's end, the autoscaler goes on deciding after the last request
// (back to one instance), and the summary says when the serving workload ended.
TEST(SharedClusterCommandTest, ARateScaleCompressesTheServingLoadNotTheRun) {
  const std::string config = std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json";
  const Replayed once = replay(config, "shared_rate1");
  const Replayed twice = replay(config, "shared_rate2", false, false, 2.0);
  ASSERT_EQ(once.code, kExitOk) << once.err;
  ASSERT_EQ(twice.code, kExitOk) << twice.err;
  const auto& jobs = twice.summary["batch"]["jobs"];
  EXPECT_EQ(jobs["total"], once.summary["batch"]["jobs"]["total"]);
  EXPECT_EQ(jobs["not_arrived"].get<int>(), 0);
  EXPECT_EQ(jobs["arrived"], jobs["total"]);
  expect_batch_adds_up(twice.summary["batch"]);
  EXPECT_EQ(twice.summary["simulated_time_s"].get<double>(), 3600.0);
  EXPECT_EQ(twice.summary["requests"]["arrived"], once.summary["requests"]["arrived"]);
  const double ended = twice.summary["serving_ended_s"].get<double>();
  EXPECT_LT(ended, 1900.0);
  EXPECT_GT(ended, 1600.0);
  // Rates are over the serving workload's span: twice the rate, twice the throughput.
  EXPECT_NEAR(twice.summary["throughput"]["completed_per_s"].get<double>(),
              2 * once.summary["throughput"]["completed_per_s"].get<double>(),
              0.1 * once.summary["throughput"]["completed_per_s"].get<double>());
  const std::string table = format_summary_table(nlohmann::ordered_json(twice.summary));
  EXPECT_NE(table.find("NOTE        the serving workload ended at 17"), std::string::npos) << table;
  const auto rows = testing::csv_rows(twice.timeseries);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(std::stod(rows.back().at("end_s")), 3600.0);
  EXPECT_EQ(rows.back().at("instances"), "1");
}

// The hung-agent scenario: scale-ups wait for their victims' agents (5 s of clean-up, or
// the 30 s cancel_timeout for the one in five that hangs), and every job still adds up.
TEST(SharedClusterCommandTest, HungBatchAgentsDelayScaleUpsAndLoseNoJob) {
  const Replayed r = replay(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-hung-agents.json",
                            "shared_hung", /*timeline=*/false, /*scaling_log=*/true);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto& batch = r.summary["batch"];
  expect_batch_adds_up(batch);
  const auto preemptions = batch["preemptions"].get<std::uint64_t>();
  const auto hung = batch["hung_agents"].get<std::uint64_t>();
  ASSERT_GT(preemptions, 20u);
  // One in five hangs: the count is a binomial draw around a fifth.
  EXPECT_GT(hung, preemptions / 10);
  EXPECT_LT(hung, preemptions * 3 / 10);
  // Only requests longer than Llama2-70B's context are dropped (refused at arrival).
  EXPECT_EQ(r.summary["requests"]["dropped"], r.summary["requests"]["dropped_for"]["over_context"]);
  EXPECT_NE(r.prometheus.find("meshsim_batch_hung_agents_total " + std::to_string(hung) + "\n"), std::string::npos);
  EXPECT_NE(r.err.find("waits 30.00 s for the agents it preempted to stop"), std::string::npos);
  EXPECT_NE(r.err.find("waits 5.00 s for the agents it preempted to stop"), std::string::npos);
}

TEST(SharedClusterCommandTest, TheRealTracesShareOneClusterAndEveryJobIsAccountedFor) {
  MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("traces/azure2023_conv.csv"));
  MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("traces/alibaba_gpu2023_openb_pod_list_default.csv"));
  const Replayed r = replay(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster.json", "shared_real");
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto& batch = r.summary["batch"];
  expect_batch_adds_up(batch);
  EXPECT_GT(batch["jobs"]["arrived"].get<int>(), 7000);  // the pods of the window
  // Batch work preempts batch work (the trace's requests within Llama2-70B's context need
  // one scale-up, which finds room without preempting; the synthetic scenario's test
  // checks serving preempting batch work).
  EXPECT_GT(batch["preemptions_by_reason"]["same_pool_preemption"].get<int>(), 0);
  EXPECT_GT(batch["requeues"].get<int>(), 0);
  EXPECT_GT(r.summary["scaling"]["scale_ups"].get<int>(), 0);
  EXPECT_GT(r.summary["scaling"]["scale_downs"].get<int>(), 0);
  EXPECT_EQ(r.summary["requests"]["arrived"], 19366);
  // Only requests longer than Llama2-70B's context are dropped (refused at arrival).
  EXPECT_EQ(r.summary["requests"]["dropped"], r.summary["requests"]["dropped_for"]["over_context"]);
}

TEST(SharedClusterCommandTest, ABadClusterObjectIsRefusedNamingItsKey) {
  auto config = nlohmann::json::parse(
      slurp(std::string(MESHSIM_SOURCE_DIR) + "/configs/scenarios/shared-cluster-synthetic.json"));
  config["workload"]["generator"] = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/azure_conv.json";
  config["cluster"]["batch"]["generator"] = std::string(MESHSIM_SOURCE_DIR) + "/configs/workloads/openb_batch.json";
  const auto with = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    auto broken = config;
    edit(broken);
    return replay(scenario_in_fresh_dir(name, "scenario.json", broken.dump()).string(), name + "_out");
  };
  auto r = with("shared_no_nodes", [](auto& c) { c["cluster"]["nodes"] = nlohmann::json::array(); });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.nodes: a fixed cluster needs nodes"), std::string::npos) << r.err;
  r = with("shared_bad_sku", [](auto& c) { c["cluster"]["nodes"][0]["sku"] = "tpu-v9"; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.nodes[0].sku: no SKU 'tpu-v9'"), std::string::npos) << r.err;
  r = with("shared_no_class", [](auto& c) { c["cluster"]["batch"]["generator"] = nlohmann::json{
      {"classes", {{{"class", "train"}, {"rate_per_s", 0.1}, {"duration_median_s", 60},
                    {"shapes", {{{"gpu", 8}, {"cpu", 32}, {"memory_mb", 1000}, {"weight", 1}}}}}}}}; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("class 'train' is not in cluster.batch.classes"), std::string::npos) << r.err;
  r = with("shared_too_small", [](auto& c) {
    c["cluster"]["nodes"][0]["count"] = 5;
    c["serving"]["start_state"][0]["count"] = 11;
  });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("the serving start state does not fit the cluster's nodes: 10 instances placed"),
            std::string::npos)
      << r.err;
  // A protected pool no class or serving uses protects nothing: a typo, refused.
  r = with("shared_protected_typo", [](auto& c) { c["cluster"]["preemption"]["protected_pools"] = {"servng"}; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.preemption.protected_pools: 'servng' is no pool of this cluster (its pools: batch, "
                       "serving)"),
            std::string::npos)
      << r.err;
  r = with("shared_protected_renamed", [](auto& c) {
    c["cluster"]["serving_pool"] = "rollout";
    c["cluster"]["preemption"]["protected_pools"] = {"serving"};
  });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("'serving' is no pool of this cluster (its pools: batch, rollout)"), std::string::npos) << r.err;
  r = with("shared_empty_pool", [](auto& c) { c["cluster"]["serving_pool"] = ""; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.serving_pool: must not be empty"), std::string::npos) << r.err;
  r = with("shared_bad_hung_share", [](auto& c) { c["cluster"]["batch"]["classes"]["BE"]["hung_share"] = 1.5; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.batch.classes.BE.hung_share: expected a share in [0, 1]"), std::string::npos) << r.err;
  r = with("shared_bad_answer", [](auto& c) { c["cluster"]["batch"]["cancel_answer_s"] = -1; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.batch.cancel_answer_s: expected a non-negative number of seconds"), std::string::npos)
      << r.err;
  r = with("shared_elastic_nodes", [](auto& c) { c["cluster"]["mode"] = "elastic"; });
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cluster.mode: nodes and batch jobs need \"mode\": \"fixed\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace meshsim::cli
