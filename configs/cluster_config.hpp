#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/object_reader.hpp"
#include "configs/serving_config.hpp"
#include "sim/shared/shared_cluster_config.hpp"
#include "traces/batch_jobs.hpp"

namespace meshsim::configs {

// N nodes of a catalog SKU (hardware.json), with the host's CPU and memory.
struct NodeGroupSpec {
  std::uint32_t count = 1;
  std::string sku;
  double cpu = 128.0;          // cores per node
  double memory_gib = 1024.0;  // host memory per node
};

enum class ClusterMode { kElastic, kFixed };
inline constexpr EnumNames kClusterModeNames{std::array{std::pair{ClusterMode::kElastic, std::string_view("elastic")},
                                                        std::pair{ClusterMode::kFixed, std::string_view("fixed")}}};

// The "cluster" object. elastic (the default): servers of the serving SKU are created on
// demand (seed 004). fixed: a node list shared by serving and batch jobs under the
// scheduling core (sim/cluster/shared_cluster).
struct ClusterSpec {
  ClusterMode mode = ClusterMode::kElastic;
  std::vector<NodeGroupSpec> node_groups;
  std::string node_list;  // an openb node list CSV (its GPU models are SKUs of their own)
  double serving_priority = 100.0;
  // The serving instances' pool; batch classes may share it (then serving and batch work
  // preempt by the same-pool rules, as seed 000's RLHF roles share one pool).
  std::string serving_pool = "serving";
  // The batch jobs: an openb pod list CSV, or a generator (at most one; neither: none).
  std::string openb_pods;
  traces::OpenbPodOptions openb;
  std::optional<traces::BatchGeneratorSpec> generator;
  // Job class (qos) -> pool, priority, labels, checkpoint interval, how its agents answer a
  // cancel. Defaults: the openb qos classes in one "batch" pool, Guaranteed 3.0 > LS 2.5 >
  // Burstable 1.5 > BE 1.0; the batch object's checkpoint_interval_s, cancel_answer_s and
  // hung_share apply to every class that does not set its own.
  std::map<std::string, shared::BatchClass> classes;
  scheduler::PreemptionPolicy policy;  // the "preemption" object applied to the defaults
};

// The default classes of openb pods (see ClusterSpec::classes): `common`'s pool,
// checkpoints and agents, with each qos's priority and label.
std::map<std::string, shared::BatchClass> default_openb_classes(const shared::BatchClass& common);

void parse_cluster(ObjectReader& parent, const std::string& base_dir, ClusterSpec& spec);
// A pool `policy` protects that neither serving nor any batch class uses (it protects
// nothing: most likely a typo), said as "'x' is no pool of this cluster (its pools: ...)".
std::optional<std::string> unknown_protected_pool(const ClusterSpec& spec, const scheduler::PreemptionPolicy& policy);
nlohmann::json cluster_to_json(const ClusterSpec& spec);

// The shared cluster a fixed-mode spec describes for this serving deployment: nodes
// (the serving SKU's nodes carry the "sku:<name>" resource serving instances ask for),
// and what one instance takes. Errors name the key (an unknown SKU, no node of the
// serving SKU).
Expected<shared::SharedClusterConfig> make_shared_cluster_config(const ClusterSpec& spec,
                                                                  const LlmServingSpec& serving,
                                                                  const Catalog& catalog);
// The batch jobs of the spec (the generator's under `seed`); a job whose class is not
// in spec.classes is an error naming it.
Expected<std::vector<traces::BatchJobRecord>> load_batch_jobs(const ClusterSpec& spec, std::uint64_t seed);
// Reads a batch generator file (as configs/workloads/openb_batch.json).
Expected<traces::BatchGeneratorSpec> load_batch_generator(const std::string& path);

}  // namespace meshsim::configs
