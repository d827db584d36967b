// The Alibaba openb pod list as batch jobs: fractional GPUs, scaled times, sorting, and
// malformed lines reported with file, line and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/shared_data.hpp"
#include "traces/batch_jobs.hpp"

namespace meshsim::traces {
namespace {

constexpr const char* kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

std::string write(const std::string& name, const std::string& text) {
  const auto path = (std::filesystem::temp_directory_path() / ("meshsim_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

TEST(OpenbPodsTest, ReadsFractionalGpusScaledTimesSortedByArrival) {
  const auto path = write("pods_ok.csv", std::string(kHeader) +
                                             "p1,12000,16384,1,460,,LS,Running,100,1100,200\n"
                                             "p2,6000,1024,2,1000,,BE,Failed,50,80,\n"
                                             "p3,4000,1024,0,0,,Burstable,Succeeded,100,160,110\n");
  OpenbPodOptions options;
  options.arrival_scale = 0.1;
  options.duration_scale = 0.5;
  const auto jobs = read_openb_pods(path, options);
  ASSERT_TRUE(jobs) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].name, "p2");  // created first
  EXPECT_DOUBLE_EQ((*jobs)[0].arrival_s, 5.0);
  EXPECT_DOUBLE_EQ((*jobs)[0].duration_s, 15.0);  // never scheduled: from creation to deletion
  EXPECT_DOUBLE_EQ((*jobs)[0].gpu, 2.0);
  EXPECT_EQ((*jobs)[1].name, "p1");  // equal arrivals keep file order
  EXPECT_DOUBLE_EQ((*jobs)[1].duration_s, 450.0);  // from scheduling to deletion
  EXPECT_DOUBLE_EQ((*jobs)[1].gpu, 0.46);
  EXPECT_DOUBLE_EQ((*jobs)[1].cpu, 12.0);
  EXPECT_EQ((*jobs)[1].job_class, "LS");
  EXPECT_DOUBLE_EQ((*jobs)[2].gpu, 0.0);
  options.limit = 1;
  EXPECT_EQ(read_openb_pods(path, options)->size(), 1u);
}

TEST(OpenbPodsTest, MalformedLinesNameTheFileLineAndField) {
  const auto bad_header = write("pods_bad_header.csv", "name,cpu\np1,1\n");
  EXPECT_NE(read_openb_pods(bad_header, {}).error().message.find("pods_bad_header.csv:1: expected the openb pod list header"),
            std::string::npos);
  const auto bad_gpu = write("pods_bad_gpu.csv", std::string(kHeader) + "p1,1000,10,1,1500,,LS,Running,0,10,0\n");
  EXPECT_NE(read_openb_pods(bad_gpu, {}).error().message.find("pods_bad_gpu.csv:2: gpu_milli must be in [0, 1000]"),
            std::string::npos);
  const auto bad_number = write("pods_bad_number.csv", std::string(kHeader) + "p1,x,10,1,100,,LS,Running,0,10,0\n");
  EXPECT_NE(read_openb_pods(bad_number, {}).error().message.find("pods_bad_number.csv:2: cpu_milli must be a whole"),
            std::string::npos);
  const auto backwards = write("pods_backwards.csv", std::string(kHeader) + "p1,1,10,1,100,,LS,Running,0,10,20\n");
  EXPECT_NE(read_openb_pods(backwards, {}).error().message.find("deletion_time 10 is before"), std::string::npos);
  EXPECT_NE(read_openb_pods("/nonexistent/pods.csv", {}).error().message.find("cannot open"), std::string::npos);
  // The scheduler keys pods by name: a second row of one name is refused, however far apart.
  const auto twice = write("pods_twice.csv", std::string(kHeader) + "p1,1,10,1,100,,LS,Running,0,10,0\n" +
                                                 "p2,1,10,1,100,,LS,Running,0,10,0\n" +
                                                 "p1,1,10,1,100,,LS,Running,5,10,5\n");
  EXPECT_NE(read_openb_pods(twice, {}).error().message.find("pods_twice.csv:4: pod 'p1' is named by "),
            std::string::npos)
      << read_openb_pods(twice, {}).error().message;
  EXPECT_NE(read_openb_pods(twice, {}).error().message.find("pods_twice.csv:2 too"), std::string::npos);
}

TEST(OpenbPodsTest, ANodeListNamingOneNodeTwiceIsRefused) {
  const auto twice = write("nodes_twice.csv", "sn,cpu_milli,memory_mib,gpu,model\n"
                                              "n1,64000,262144,8,V100M32\n"
                                              "n1,64000,262144,8,V100M32\n");
  const auto nodes = read_openb_nodes(twice);
  ASSERT_FALSE(nodes);
  EXPECT_NE(nodes.error().message.find("nodes_twice.csv:3: node 'n1' is named by "), std::string::npos)
      << nodes.error().message;
}

TEST(OpenbPodsTest, TheRealPodListReadsEveryPod) {
  const auto path = meshsim::testing::shared_path("traces/alibaba_gpu2023_openb_pod_list_default.csv");
  MESHSIM_NEED_SHARED_FILE(path);
  const auto jobs = read_openb_pods(path, {});
  ASSERT_TRUE(jobs) << jobs.error().message;
  EXPECT_EQ(jobs->size(), 8152u);
  double gpus = 0;
  std::size_t best_effort = 0;
  for (const auto& job : *jobs) {
    gpus += job.gpu;
    best_effort += job.job_class == "BE";
  }
  EXPECT_EQ(best_effort, 3398u);
  EXPECT_GT(gpus, 5000.0);
}

}  // namespace
}  // namespace meshsim::traces

namespace meshsim::traces {
namespace {

TEST(OpenbPodsTest, ScaledTimesBeyondABillionSecondsAreRefused) {
  const auto path = write("pods_huge.csv", std::string(kHeader) + "p1,1000,10,1,100,,LS,Running,0,10000,0\n");
  OpenbPodOptions options;
  options.duration_scale = 1e6;  // 1e10 s
  const auto jobs = read_openb_pods(path, options);
  ASSERT_FALSE(jobs);
  EXPECT_NE(jobs.error().message.find("pods_huge.csv:2: the scaled arrival or run time exceeds 1e9 s"),
            std::string::npos)
      << jobs.error().message;
}

TEST(BatchGeneratorTest, JobsFollowTheSpecAndRepeatWithTheSeed) {
  BatchGeneratorSpec spec;
  spec.duration_s = 1000;
  spec.classes.push_back(BatchClassLoad{"train", 0.05, 100, 0.5, {{8, 32, 1000, 1}}, 600.0});
  spec.classes.push_back(BatchClassLoad{"rollout", 1.0, 10, 8.0, {{1, 4, 100, 3}, {0.5, 2, 50, 1}}, std::nullopt});
  ASSERT_FALSE(check(spec));
  const auto jobs = generate_batch_jobs(spec, 7);
  EXPECT_EQ(jobs, generate_batch_jobs(spec, 7));
  EXPECT_NE(jobs, generate_batch_jobs(spec, 8));
  std::size_t train = 0, half = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i > 0) {
      EXPECT_LE(jobs[i - 1].arrival_s, jobs[i].arrival_s);
    }
    EXPECT_LT(jobs[i].arrival_s, 1000);
    EXPECT_GT(jobs[i].duration_s, 0);
    EXPECT_LE(jobs[i].duration_s, kMaxBatchSeconds);  // sigma 8 can reach the cap
    train += jobs[i].job_class == "train";
    half += jobs[i].gpu == 0.5;
    if (jobs[i].job_class == "train") {
      EXPECT_EQ(jobs[i].checkpoint_interval_s, 600.0);
    }
  }
  EXPECT_NEAR(static_cast<double>(train), 50, 25);                    // 0.05/s over 1,000 s
  EXPECT_NEAR(static_cast<double>(half), 0.25 * (jobs.size() - train), 60);  // weight 1 of 4
  spec.duration_s = 1e9;  // a billion seconds at 1 job/s: refused before generating
  ASSERT_TRUE(check(spec));
  EXPECT_NE(check(spec)->find("more than 10,000,000"), std::string::npos) << *check(spec);
  spec.duration_s = 1000;
  spec.classes[1].shapes.clear();
  EXPECT_TRUE(check(spec));
}

}  // namespace
}  // namespace meshsim::traces

namespace meshsim::traces {
namespace {

TEST(OpenbNodesTest, ReadsNodesAndNamesABadLine) {
  const auto path = write("nodes_ok.csv", "sn,cpu_milli,memory_mib,gpu,model\r\nn0,64000,262144,2,P100\r\n\r\nn1,96000,393216,8,G2\n");
  const auto nodes = read_openb_nodes(path);
  ASSERT_TRUE(nodes) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[1], (NodeRecord{"n1", 96.0, 393216 * 1.048576, 8, "G2"}));
  const auto bad = write("nodes_bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,two,P100\n");
  EXPECT_NE(read_openb_nodes(bad).error().message.find("nodes_bad.csv:2: gpu must be a whole number"),
            std::string::npos);
  const auto short_row = write("nodes_short.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000\n");
  EXPECT_NE(read_openb_nodes(short_row).error().message.find("nodes_short.csv:2: expected 5 comma-separated fields"),
            std::string::npos);
}

TEST(OpenbNodesTest, TheRealNodeListReadsEveryNode) {
  const auto path = meshsim::testing::shared_path("traces/alibaba_gpu2023_openb_node_list_gpu_node.csv");
  MESHSIM_NEED_SHARED_FILE(path);
  const auto nodes = read_openb_nodes(path);
  ASSERT_TRUE(nodes) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 1213u);
  std::uint64_t gpus = 0;
  for (const auto& node : *nodes) gpus += node.gpus;
  EXPECT_EQ(gpus, 6212u);
}

}  // namespace
}  // namespace meshsim::traces
