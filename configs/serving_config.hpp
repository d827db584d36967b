#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <map>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/object_reader.hpp"
#include "sim/cluster/fixed_latency_config.hpp"
#include "sim/cluster/llm_cluster_config.hpp"

namespace meshsim::configs {

// The LLM serving model as a scenario names it: the deployment by names (resolved against
// the Catalog, and a profile CSV for the table backend, by resolve_llm_cluster) and the
// serving options, which the cluster takes as they are.
struct LlmServingSpec : cluster::ServingOptions {
  std::string model = "llama2-70b";
  // How the model is served, over what its catalog entry or config.json says (an fp8
  // checkpoint of it, vLLM's --kv-cache-dtype fp8); unset: the model's own.
  std::optional<cluster::Precision> weights, kv_cache;
  std::string sku = "h100-80gb";
  std::uint32_t tensor_parallel = 8;
  enum class Backend { kRoofline, kTable, kConstant, kStepModel } backend = Backend::kRoofline;
  std::string profile;  // table backend: a profile CSV (SplitwiseSim's perf_model.csv layout)
  double constant_prefill_ms = 10, constant_decode_ms = 20;  // constant backend
  std::vector<cluster::InstanceGroup> start_state = std::vector(1, cluster::InstanceGroup{cluster::InstanceTag::kMixed, 4});
  // Pools whose start state groups name their own "sku" or "tensor_parallel" (SplitwiseSim's
  // HA: A100 prompt, H100 token instances); empty sku or 0: the serving's.
  struct PoolHardware {
    std::string sku;
    std::uint32_t tensor_parallel = 0;
    std::size_t group = 0;  // the start_state index that named it, for errors
  };
  std::map<cluster::InstanceTag, PoolHardware> pool_hardware;
};

inline constexpr EnumNames kBackendNames{
    std::array{std::pair{LlmServingSpec::Backend::kRoofline, std::string_view("roofline")},
               std::pair{LlmServingSpec::Backend::kTable, std::string_view("table")},
               std::pair{LlmServingSpec::Backend::kConstant, std::string_view("constant")},
               std::pair{LlmServingSpec::Backend::kStepModel, std::string_view("step_model")}}};

using ServingSpec = std::variant<LlmServingSpec, cluster::FixedLatencyConfig>;

// Reads the "serving" object: "kind" is "llm" (default) or "fixed_latency".
void parse_serving(ObjectReader& parent, const std::string& base_dir, ServingSpec& spec);
nlohmann::json serving_to_json(const ServingSpec& spec);

// For the roofline model, when the catalog has no fit for the deployment (its model, SKU
// and TP degree) and it borrows factors: {"source": "sku_median" | "built_in", "model",
// "sku", "tensor_parallel", "note"} (the note says what to run to fit them); null when it
// has its own fit or another performance model.
nlohmann::json borrowed_roofline_factors(const ServingSpec& spec, const Catalog& catalog);

// The model as `spec` serves it: its weights and KV cache in the precisions the scenario
// sets (serving.weights, serving.kv_cache), else its own.
cluster::ModelSpec served_model(const cluster::ModelSpec& model, const LlmServingSpec& spec);

// The LLM cluster's configuration, resolved against the catalog (model, SKUs, performance
// model) and checked as a whole; errors name the missing model, SKU or profile, or the
// key of a combination that cannot run. With `place_start_state` false the cluster
// starts empty: its owner places the start state (a shared cluster does, through the
// scheduling core).
Expected<cluster::LlmClusterConfig> resolve_llm_cluster(const LlmServingSpec& spec, const Catalog& catalog,
                                                        bool place_start_state = true);

}  // namespace meshsim::configs
