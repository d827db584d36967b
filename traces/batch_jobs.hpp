#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::traces {

// One batch job of a cluster trace (training, reward, rollout or any other GPU work that
// shares the cluster with serving), before it is mapped to pools and priorities.
// The longest arrival offset or run time a batch job may have, seconds (a billion: 31
// years; far below what simulated time can hold).
inline constexpr double kMaxBatchSeconds = 1e9;

struct BatchJobRecord {
  std::string name;
  double arrival_s = 0.0;   // seconds from the start of the run
  double duration_s = 0.0;  // work to do, seconds on its resources (> 0)
  double cpu = 0.0;         // cores
  double memory_mb = 0.0;
  double gpu = 0.0;  // GPUs, fractional allowed (a 0.46-GPU share is 0.46)
  // The class that decides its priority and labels: the trace's qos (LS, Burstable,
  // Guaranteed, BE) or a generator's role (train, reward, rollout).
  std::string job_class;
  // Seconds of work between checkpoints; none: the class's (or the cluster's) default.
  std::optional<double> checkpoint_interval_s;
  bool operator==(const BatchJobRecord&) const = default;
};

// How pods of the Alibaba GPU trace (cluster-trace-gpu-v2023, openb_pod_list_*.csv) become
// jobs of a run. The trace spans about 149 days; a run of one serving trace spans hours,
// so arrivals and durations are scaled (separately: a run can compress 149 days of
// arrivals into an hour and keep jobs minutes long).
struct OpenbPodOptions {
  // The trace second the run starts at. Pods created before it and still running then
  // arrive at time 0 with the run time they had left; pods that ended before it are left
  // out. (Most openb pods are created in the trace's last fifth.)
  double start_s = 0.0;
  double arrival_scale = 1.0;   // run seconds per trace second of creation_time
  double duration_scale = 1.0;  // run seconds per trace second of run time
  double min_duration_s = 1.0;  // shorter (scaled) durations are raised to this
  std::optional<std::uint64_t> limit;  // the first N pods by creation time
};

// Reads `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time`. A pod asks for num_gpu x gpu_milli / 1000 GPUs; it runs
// from scheduled_time (creation_time when never scheduled) to deletion_time, whatever its
// final phase (a failed pod held its GPUs too), and arrives at
// (creation_time - start_s) x arrival_scale. Sorted by arrival, then file order. A
// malformed line is an error naming the file, the line and the field; so is a pod whose
// scaled arrival or run time exceeds kMaxBatchSeconds.
Expected<std::vector<BatchJobRecord>> read_openb_pods(const std::string& path, const OpenbPodOptions& options);

// A synthetic stream of batch jobs: per class, Poisson arrivals, lognormal run times and
// pod shapes drawn by weight (configs/workloads/openb_batch.json is fitted to the openb
// pod list; an RLHF-like mix is train / reward / rollout classes).
struct BatchShape {
  double gpu = 1.0, cpu = 1.0, memory_mb = 1024.0;
  double weight = 1.0;
};
struct BatchClassLoad {
  std::string job_class;
  double rate_per_s = 0.1;
  double duration_median_s = 60.0;
  double duration_sigma = 0.0;  // of the log; 0: every job runs the median
  std::vector<BatchShape> shapes;
  std::optional<double> checkpoint_interval_s;  // none: the class's default
};
struct BatchGeneratorSpec {
  std::vector<BatchClassLoad> classes;
  double duration_s = 3600.0;  // arrivals in [0, duration_s)
};

// The most jobs a generator may be expected to make (they are generated before the run).
inline constexpr double kMaxGeneratedJobs = 1e7;

// Empty when the spec is sound; else what is wrong with it.
std::optional<std::string> check(const BatchGeneratorSpec& spec);
// The jobs of `spec` under `seed`, sorted by arrival (each class draws from its own
// stream, so adding a class leaves the others' jobs unchanged). Names are
// "<class>-<n>"; run times are capped at kMaxBatchSeconds (a lognormal's tail is long).
std::vector<BatchJobRecord> generate_batch_jobs(const BatchGeneratorSpec& spec, std::uint64_t seed);

// One GPU node of the Alibaba trace's node list (openb_node_list_gpu_node.csv).
struct NodeRecord {
  std::string name;
  double cpu = 0.0;  // cores
  double memory_mb = 0.0;
  std::uint32_t gpus = 0;
  std::string model;  // the GPU model (G2, T4, P100, V100M16, ...)
  bool operator==(const NodeRecord&) const = default;
};

// Reads `sn,cpu_milli,memory_mib,gpu,model`, in file order.
Expected<std::vector<NodeRecord>> read_openb_nodes(const std::string& path);

}  // namespace meshsim::traces
