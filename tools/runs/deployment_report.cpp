#include "tools/runs/deployment_report.hpp"

#include <cstdio>
#include <string>

#include "sim/cluster/serving_hardware.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::ordered_json;

ordered_json pool_json(const std::string& pools, const cluster::InstanceHardware& hw, const std::string& source) {
  return ordered_json{{"pools", pools},
                      {"sku", hw.sku.name},
                      {"tensor_parallel", hw.tensor_parallel},
                      {"instances_per_server", hw.per_server},
                      {"kv_capacity_tokens_per_instance", hw.kv_capacity_tokens},
                      {"step_time", source}};
}

std::string context_text(std::uint32_t tokens) { return tokens > 0 ? std::to_string(tokens) + " tokens" : "unknown"; }

}  // namespace

ordered_json deployment_json(const cluster::LlmClusterConfig& config) {
  const cluster::ModelSpec& model = config.model;
  const cluster::ServingHardware hardware(config);
  ordered_json out;
  out["model"] = model.name;
  out["hf_id"] = model.hf_id;
  out["parameters"] = model.parameters;
  out["active_parameters"] = model.active_parameters();
  out["kv_bytes_per_token"] = model.kv_bytes_per_token();
  out["model_context_tokens"] = model.max_context_tokens > 0 ? ordered_json(model.max_context_tokens) : nullptr;
  out["context_limit_tokens"] = config.max_model_len ? ordered_json(*config.max_model_len) : nullptr;
  // Under the vLLM scheduler configs fills in the model's own; otherwise only a scenario sets one.
  const bool own = config.max_model_len && config.scheduler == cluster::BatchScheduler::kVllm &&
                   *config.max_model_len == model.max_context_tokens;
  out["context_limit_from"] = !config.max_model_len ? "nowhere: SplitwiseSim's rules serve every length (set serving.vllm.max_model_len to refuse longer requests)"
                              : own                 ? "the model (max_position_embeddings)"
                                                    : "the scenario (serving.vllm.max_model_len)";
  // One entry per kind of server: the cluster's own, then each pool on other hardware.
  std::string main_pools = config.pool_hardware.empty() ? "every pool" : "the pools not listed below";
  out["servers"] = ordered_json::array({pool_json(main_pools, hardware.kind(0), config.perf_source)});
  for (const auto& pool : config.pool_hardware) {
    if (hardware.index_of(pool.tag) == 0) continue;
    out["servers"].push_back(pool_json(std::string(cluster::kInstanceTagNames.name(pool.tag)),
                                       hardware.of(pool.tag), pool.perf_source));
  }
  return out;
}

std::string deployment_text(const ordered_json& d) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "model       %s: %.2fe9 parameters (%.2fe9 active), %.0f KV bytes per token, context %s\n",
                d["model"].get<std::string>().c_str(), d["parameters"].get<double>() / 1e9,
                d["active_parameters"].get<double>() / 1e9, d["kv_bytes_per_token"].get<double>(),
                context_text(d["model_context_tokens"].is_null() ? 0 : d["model_context_tokens"].get<std::uint32_t>())
                    .c_str());
  out += line;
  const auto& limit = d["context_limit_tokens"];
  if (limit.is_null()) {
    std::snprintf(line, sizeof line, "context     no limit, from %s\n", d["context_limit_from"].get<std::string>().c_str());
  } else {
    std::snprintf(line, sizeof line, "context     at most %s served, from %s\n",
                  context_text(limit.get<std::uint32_t>()).c_str(), d["context_limit_from"].get<std::string>().c_str());
  }
  out += line;
  for (const auto& s : d["servers"]) {
    std::snprintf(line, sizeof line, "servers     %s: %s at TP %u (%u instances per server), %llu KV tokens per instance; %s\n",
                  s["pools"].get<std::string>().c_str(), s["sku"].get<std::string>().c_str(),
                  s["tensor_parallel"].get<unsigned>(), s["instances_per_server"].get<unsigned>(),
                  static_cast<unsigned long long>(s["kv_capacity_tokens_per_instance"].get<std::uint64_t>()),
                  s["step_time"].get<std::string>().c_str());
    out += line;
  }
  return out;
}

std::string models_text(const configs::Catalog& catalog) {
  std::string out =
      "model                          parameters   active  weights  KV cache  KV bytes/token   context  Hugging Face id\n";
  char line[512];
  for (const auto& [name, m] : catalog.models) {
    std::snprintf(line, sizeof line, "%-30s %9.2fe9 %7.2fe9 %8s %9s %15.0f %9s  %s\n", name.c_str(),
                  m.parameters / 1e9, m.active_parameters() / 1e9,
                  std::string(cluster::kPrecisionNames.name(m.weights)).c_str(),
                  std::string(cluster::kPrecisionNames.name(m.kv_cache)).c_str(), m.kv_bytes_per_token(),
                  m.max_context_tokens > 0 ? std::to_string(m.max_context_tokens).c_str() : "unknown",
                  m.hf_id.c_str());
    out += line;
  }
  // Where each SKU's step times come from: a fit in step_model.json, or the datasheet's
  // roofline with no overheads (uncalibrated).
  out += "\nSKU                    GPUs   HBM GiB  BF16 TF/s  FP8 TF/s   HBM TB/s  $/server-h  step-time factors\n";
  for (const auto& [name, sku] : catalog.skus) {
    const bool fitted = catalog.step_fit(name) != nullptr;
    const auto source = catalog.step_fit_sources.find(name);
    const std::string fitted_on =
        source != catalog.step_fit_sources.end() && !source->second.empty() ? "fitted: " + source->second : "fitted";
    std::snprintf(line, sizeof line, "%-22s %4u %9.0f %10.0f %9s %10.2f %11.2f  %s\n", name.c_str(), sku.gpus_per_node,
                  sku.hbm_gib_per_gpu, sku.peak_tflops,
                  sku.peak_tflops_fp8 > 0 ? std::to_string(static_cast<long>(sku.peak_tflops_fp8)).c_str() : "-",
                  sku.hbm_tb_per_s, sku.cost_per_hour,
                  fitted ? fitted_on.c_str() : "uncalibrated (the datasheet's roofline, no overheads)");
    out += line;
  }
  return out;
}

}  // namespace meshsim::cli
