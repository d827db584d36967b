#include "configs/serving_config.hpp"

#include <filesystem>

#include "configs/profile_csv.hpp"
#include "sim/perf/perf_profile.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

constexpr EnumNames kKindNames{std::array{std::pair{0, std::string_view("llm")},
                                          std::pair{1, std::string_view("fixed_latency")}}};


void parse_fixed(ObjectReader& reader, cluster::FixedLatencyConfig& serving) {
  reader.read("instances", serving.instances, "a positive integer", kAtLeastOne);
  reader.read("max_batch", serving.max_batch, "a positive integer", kAtLeastOne);
  reader.read_optional("max_queue", serving.max_queue);
  reader.read_duration("prefill_base_ms", serving.prefill_base, 1e-3);
  reader.read("prefill_us_per_token", serving.prefill_us_per_token, "a non-negative number", kNonNegative);
  reader.read_duration("time_per_output_token_ms", serving.time_per_output_token, 1e-3);
  // One set of routing names for both models; this one has requests to count, no tokens.
  // "least_loaded" is the name it had before (kept so older configs still read).
  if (const auto* routing = reader.raw("routing"); routing != nullptr && *routing == "least_loaded") {
    serving.routing = cluster::RoutePolicy::kFewestRequests;
  } else {
    reader.read_choice("routing", serving.routing, cluster::kRoutePolicyNames);
    if (serving.routing != cluster::RoutePolicy::kRoundRobin && serving.routing != cluster::RoutePolicy::kFewestRequests) {
      reader.fail("routing", "the fixed-latency model routes 'round_robin' or 'fewest_requests', got '" +
                                 std::string(cluster::kRoutePolicyNames.name(serving.routing)) + "'");
    }
  }
  reader.read("gpus_per_instance", serving.gpus_per_instance);
  reader.read("cost_per_instance_hour", serving.cost_per_instance_hour, "a non-negative price", kNonNegative);
}


// serving.vllm.host_kv: vLLM's CPU offloading, a host-memory KV tier per instance.
void read_host_kv(ObjectReader& vllm, LlmServingSpec& spec) {
  const json* raw = vllm.raw("host_kv");
  if (raw == nullptr || raw->is_null()) return;
  ObjectReader host(raw, vllm.path_of("host_kv"), vllm.errors());
  cluster::HostKvOptions& o = spec.vllm.host_kv;
  host.read("capacity_tokens", o.capacity_tokens, "a positive number of tokens per instance", kAtLeastOne);
  host.read("capacity_gib", o.capacity_gib, "a positive number of GiB per instance", kPositive);
  if ((o.capacity_tokens > 0) == (o.capacity_gib > 0)) {
    host.fail("capacity_gib", "expected the tier's room per instance: capacity_gib or capacity_tokens (one of them)");
  }
  host.read("block_tokens", o.block_tokens, "a multiple of serving.vllm.block_size (" +
                                                std::to_string(spec.vllm.block_size) + ") in [1, 65536] tokens",
            [&](std::uint64_t b) { return b >= 1 && b <= 65536 && b % spec.vllm.block_size == 0; });
  host.read_choice("eviction", o.eviction, cluster::kHostEvictionNames);
  host.read("link_gb_per_s", o.link_gb_per_s, "a bandwidth per GPU in GB/s (0: copies take no time)",
            [](double v) { return v >= 0 && v <= 1e6; });
  host.read_duration("load_latency_ms", o.load_latency, 1e-3);
  if (o.capacity_tokens > 0 && o.capacity_tokens < o.block_tokens) {
    host.fail("capacity_tokens", "expected room for at least one block (" + std::to_string(o.block_tokens) + " tokens)");
  }
  if (spec.scheduler != cluster::BatchScheduler::kVllm) {
    host.fail("capacity_gib", "a host KV tier needs the vLLM scheduler (serving.scheduler: vllm)");
  }
  host.finish();
}

void parse_llm(ObjectReader& reader, const std::string& base_dir, LlmServingSpec& spec) {
  reader.read("model", spec.model);
  for (auto [key, precision] : {std::pair{"weights", &spec.weights}, std::pair{"kv_cache", &spec.kv_cache}}) {
    if (const nlohmann::json* value = reader.raw(key); value != nullptr && !value->is_null()) {
      cluster::Precision chosen = precision->value_or(cluster::Precision::k16Bit);
      reader.read_choice(key, chosen, cluster::kPrecisionNames);
      *precision = chosen;
    }
  }
  reader.read("sku", spec.sku);
  reader.read("tensor_parallel", spec.tensor_parallel, "a positive integer", kAtLeastOne);
  reader.read_choice("backend", spec.backend, kBackendNames);
  reader.read("profile", spec.profile);
  if (!spec.profile.empty() && std::filesystem::path(spec.profile).is_relative()) {
    spec.profile = (std::filesystem::path(base_dir) / spec.profile).lexically_normal().string();
  }
  if (spec.backend == LlmServingSpec::Backend::kTable && spec.profile.empty()) {
    reader.fail("profile", "the table backend needs a profile CSV");
  }
  {
    ObjectReader constant(reader.raw("constant"), reader.path_of("constant"), reader.errors());
    const auto ms = [](double v) { return v > 0 && v <= cluster::kMaxIterationMs; };
    constant.read("prefill_ms", spec.constant_prefill_ms, "a positive number of ms", ms);
    constant.read("decode_ms", spec.constant_decode_ms, "a positive number of ms", ms);
  }
  if (const json* groups = reader.raw("start_state")) {
    spec.start_state.clear();
    spec.pool_hardware.clear();
    if (!groups->is_array() || groups->empty()) {
      reader.fail("start_state", "expected a list of {\"tag\", \"count\"}");
    } else {
      for (std::size_t i = 0; i < groups->size(); ++i) {
        ObjectReader group(&(*groups)[i], reader.path_of("start_state") + "[" + std::to_string(i) + "]",
                           reader.errors());
        cluster::InstanceGroup g;
        group.read_choice("tag", g.tag, cluster::kInstanceTagNames);
        group.read("count", g.count, "a positive integer", kAtLeastOne);
        LlmServingSpec::PoolHardware hardware{.sku = {}, .tensor_parallel = 0, .group = i};
        group.read("sku", hardware.sku);
        group.read("tensor_parallel", hardware.tensor_parallel, "a positive integer", kAtLeastOne);
        if (!hardware.sku.empty() || hardware.tensor_parallel != 0) {
          const auto [named, fresh] = spec.pool_hardware.emplace(g.tag, hardware);
          const bool same_tp = named->second.tensor_parallel == hardware.tensor_parallel;
          if (!fresh && (named->second.sku != hardware.sku || !same_tp)) {
            // At the key this group names differently.
            group.fail(hardware.tensor_parallel != 0 && !same_tp ? "tensor_parallel" : "sku",
                       "the " + std::string(cluster::kInstanceTagNames.name(g.tag)) + " pool's hardware is named by " +
                           reader.path_of("start_state") + "[" + std::to_string(named->second.group) +
                           "] already: a pool runs on one SKU and TP degree");
          }
        }
        spec.start_state.push_back(g);
      }
    }
  }
  {
    ObjectReader batching(reader.raw("batching"), reader.path_of("batching"), reader.errors());
    batching.read("max_batch_size", spec.batching.max_batch_size, "a positive integer", kAtLeastOne);
    batching.read("max_batch_tokens", spec.batching.max_batch_tokens, "a positive integer", kAtLeastOne);
    batching.read("max_preemptions", spec.batching.max_preemptions);
  }
  reader.read("max_requests_in_system", spec.max_requests_in_system, "an integer in [1, 1e8]",
              [](std::uint64_t v) { return v >= 1 && v <= 100'000'000; });
  reader.read_choice("scheduler", spec.scheduler, cluster::kBatchSchedulerNames);
  {
    ObjectReader vllm(reader.raw("vllm"), reader.path_of("vllm"), reader.errors());
    cluster::VllmLimits& v = spec.vllm;
    vllm.read("max_num_seqs", v.max_num_seqs, "a positive integer", kAtLeastOne);
    vllm.read("max_num_batched_tokens", v.max_num_batched_tokens, "a positive integer", kAtLeastOne);
    vllm.read("long_prefill_token_threshold", v.long_prefill_token_threshold);
    vllm.read("block_size", v.block_size, "a block size in [1, 4096] tokens",
              [](std::uint64_t b) { return b >= 1 && b <= 4096; });
    vllm.read("prefix_caching", v.prefix_caching);
    vllm.read_choice("scheduling_policy", v.policy, cluster::kVllmPolicyNames);
    vllm.read_optional("max_model_len", spec.max_model_len, "a positive number of tokens", kAtLeastOne);
    vllm.read_optional_duration("request_timeout_s", spec.request_timeout, 1.0);
    if (spec.request_timeout && *spec.request_timeout <= engine::SimTime::zero()) {
      vllm.fail("request_timeout_s", "expected a positive number of seconds");
    }
    read_host_kv(vllm, spec);
    if (v.max_num_batched_tokens < v.max_num_seqs) {
      vllm.fail("max_num_batched_tokens", "must be at least max_num_seqs (" + std::to_string(v.max_num_seqs) +
                                              "), as vLLM requires: every running request decodes each step");
    }
  }
  {
    ObjectReader routing(reader.raw("routing"), reader.path_of("routing"), reader.errors());
    routing.read_choice("prompt", spec.prompt_routing, cluster::kRoutePolicyNames);
    routing.read_choice("token", spec.token_routing, cluster::kRoutePolicyNames);

  }
  {
    ObjectReader kv(reader.raw("kv"), reader.path_of("kv"), reader.errors());
    kv.read("reserve_fraction", spec.kv_reserve_fraction, "a fraction in [0, 1)",
            [](double v) { return v >= 0 && v < 1; });
    kv.read_optional("capacity_tokens", spec.kv_capacity_tokens, "a positive integer", kAtLeastOne);
    kv.read_choice("allocation", spec.kv_allocation, cluster::kKvAllocationNames);
    kv.read_optional("transfer_gb_per_s", spec.kv_transfer_gb_per_s, "a positive bandwidth", kPositive);
  }
  reader.read("fold_decode", spec.fold_decode);
}

json host_kv_to_json(const cluster::HostKvOptions& o) {
  if (!o.enabled()) return nullptr;
  json out{{"block_tokens", o.block_tokens},
           {"eviction", cluster::kHostEvictionNames.name(o.eviction)},
           {"link_gb_per_s", o.link_gb_per_s},
           {"load_latency_ms", o.load_latency.ms()}};
  if (o.capacity_tokens > 0) out["capacity_tokens"] = o.capacity_tokens;
  if (o.capacity_gib > 0) out["capacity_gib"] = o.capacity_gib;
  return out;
}

json llm_to_json(const LlmServingSpec& spec) {
  json groups = json::array();
  for (const auto& g : spec.start_state) {
    json group{{"tag", cluster::kInstanceTagNames.name(g.tag)}, {"count", g.count}};
    if (const auto it = spec.pool_hardware.find(g.tag); it != spec.pool_hardware.end()) {
      if (!it->second.sku.empty()) group["sku"] = it->second.sku;
      if (it->second.tensor_parallel != 0) group["tensor_parallel"] = it->second.tensor_parallel;
    }
    groups.push_back(std::move(group));
  }
  return json{{"kind", "llm"},
              {"model", spec.model},
              {"weights", spec.weights ? json(cluster::kPrecisionNames.name(*spec.weights)) : json(nullptr)},
              {"kv_cache", spec.kv_cache ? json(cluster::kPrecisionNames.name(*spec.kv_cache)) : json(nullptr)},
              {"sku", spec.sku},
              {"tensor_parallel", spec.tensor_parallel},
              {"backend", kBackendNames.name(spec.backend)},
              {"profile", spec.profile},
              {"constant", {{"prefill_ms", spec.constant_prefill_ms}, {"decode_ms", spec.constant_decode_ms}}},
              {"start_state", groups},
              {"scheduler", cluster::kBatchSchedulerNames.name(spec.scheduler)},
              {"max_requests_in_system", spec.max_requests_in_system},
              {"vllm",
               {{"max_num_seqs", spec.vllm.max_num_seqs},
                {"max_num_batched_tokens", spec.vllm.max_num_batched_tokens},
                {"long_prefill_token_threshold", spec.vllm.long_prefill_token_threshold},
                {"block_size", spec.vllm.block_size},
                {"prefix_caching", spec.vllm.prefix_caching},
                {"scheduling_policy", cluster::kVllmPolicyNames.name(spec.vllm.policy)},
                {"host_kv", host_kv_to_json(spec.vllm.host_kv)},
                {"max_model_len", spec.max_model_len ? json(*spec.max_model_len) : json(nullptr)},
                {"request_timeout_s", spec.request_timeout ? json(spec.request_timeout->seconds()) : json(nullptr)}}},
              {"batching",
               {{"max_batch_size", spec.batching.max_batch_size},
                {"max_batch_tokens", spec.batching.max_batch_tokens},
                {"max_preemptions", spec.batching.max_preemptions}}},
              {"routing",
               {{"prompt", cluster::kRoutePolicyNames.name(spec.prompt_routing)},
                {"token", cluster::kRoutePolicyNames.name(spec.token_routing)}}},
              {"kv",
               {{"reserve_fraction", spec.kv_reserve_fraction},
                {"capacity_tokens", spec.kv_capacity_tokens ? json(*spec.kv_capacity_tokens) : json(nullptr)},
                {"allocation", cluster::kKvAllocationNames.name(spec.kv_allocation)},
                {"transfer_gb_per_s", spec.kv_transfer_gb_per_s ? json(*spec.kv_transfer_gb_per_s) : json(nullptr)}}},
              {"fold_decode", spec.fold_decode}};
}

json fixed_to_json(const cluster::FixedLatencyConfig& s) {
  return json{{"kind", "fixed_latency"},
              {"instances", s.instances},
              {"max_batch", s.max_batch},
              {"max_queue", s.max_queue ? json(*s.max_queue) : json(nullptr)},
              {"prefill_base_ms", s.prefill_base.ms()},
              {"prefill_us_per_token", s.prefill_us_per_token},
              {"time_per_output_token_ms", s.time_per_output_token.ms()},
              {"routing", cluster::kRoutePolicyNames.name(s.routing)},
              {"gpus_per_instance", s.gpus_per_instance},
              {"cost_per_instance_hour", s.cost_per_instance_hour}};
}

// The hardware `sku_name` at `tp` for the serving's model, priced by its backend; errors
// name `where` ("serving" or the start state group that named it).
Expected<cluster::PoolHardware> pool_hardware(const LlmServingSpec& llm, const Catalog& catalog,
                                              const cluster::ModelSpec& model, const std::string& sku_name,
                                              std::uint32_t tp, const std::string& where) {
  const cluster::SkuSpec* sku = catalog.find_sku(sku_name);
  if (sku == nullptr) return Error{where + ".sku: no SKU '" + sku_name + "' in hardware.json"};
  if (sku->gpus_per_node % tp != 0) {
    return Error{where + ".tensor_parallel: " + std::to_string(tp) + " does not divide the " +
                 std::to_string(sku->gpus_per_node) + " GPUs of a " + sku_name + " server"};
  }
  // Check now what the cluster would otherwise assert on.
  const double hbm = tp * sku->hbm_gib_per_gpu * 1024.0 * 1024.0 * 1024.0;
  // vLLM's KV blocks are counted in 32 bits (and no instance holds 2^32 of them).
  const std::uint64_t kv_tokens = cluster::instance_kv_tokens(llm, model, *sku, tp);
  if (llm.scheduler == cluster::BatchScheduler::kVllm && kv_tokens / llm.vllm.block_size >= (1ull << 32)) {
    return Error{where + ": " + std::to_string(kv_tokens) + " KV tokens per instance make " +
                 std::to_string(kv_tokens / llm.vllm.block_size) + " blocks of " +
                 std::to_string(llm.vllm.block_size) + " tokens, more than 2^32 - 1 (lower serving.kv.capacity_tokens "
                 "or raise serving.vllm.block_size)"};
  }
  if (!llm.kv_capacity_tokens && kv_tokens == 0) {
    return Error{where + ": " + llm.model + " does not fit on " + std::to_string(tp) + " x " + sku_name +
                 " GPUs with room for one KV token" +
                 (model.weight_bytes() < hbm ? " (lower serving.kv.reserve_fraction)" : "")};
  }
  cluster::PoolHardware hardware;
  hardware.sku = *sku;
  hardware.tensor_parallel = tp;
  if (llm.backend == LlmServingSpec::Backend::kTable) {
    auto rows = read_profile_csv(llm.profile);
    if (!rows) return rows.error();
    auto table = cluster::make_table_model(cluster::select_rows(*rows, llm.model, sku_name, tp));
    if (!table) {
      return Error{llm.profile + ": no usable rows for " + llm.model + " on " + sku_name + " at TP " +
                   std::to_string(tp) + ": " + table.error().message};
    }
    hardware.perf = std::make_shared<cluster::TablePerfModel>(std::move(*table));
    // The file's name only: its path (in the resolved config) depends on where the run starts.
    hardware.perf_source =
        "table: the measured rows of " + std::filesystem::path(llm.profile).filename().string() + " (serving.profile)";
  } else if (llm.backend == LlmServingSpec::Backend::kConstant) {
    hardware.perf = std::make_shared<cluster::ConstantPerfModel>(llm.constant_prefill_ms, llm.constant_decode_ms);
    hardware.perf_source = "constant: the scenario's prefill and decode times";
  } else if (llm.backend == LlmServingSpec::Backend::kStepModel) {
    const cluster::StepCoefficients* fit = catalog.step_fit(sku->name);
    hardware.perf = std::make_shared<cluster::StepTimeModel>(model, *sku, tp, fit ? *fit : cluster::StepCoefficients{});
    hardware.perf_source = fit ? "step_model: coefficients fitted on " + sku->name + " (step_model.json)"
                               : "step_model: borrowed coefficients (the built-in ones; no fit for " + sku->name +
                                     " in step_model.json)";
  } else {
    const FactorsLookup lookup = catalog.lookup_factors(model.name, sku->name, tp);
    hardware.perf = std::make_shared<cluster::RooflinePerfModel>(model, *sku, tp, lookup.factors);
    hardware.perf_source = lookup.source == FactorsSource::kFitted
                               ? "roofline: factors fitted for " + model.name + " on " + sku->name + " at TP " +
                                     std::to_string(tp) + " (perf_fits.json)"
                           : lookup.source == FactorsSource::kSkuMedian
                               ? "roofline: borrowed factors (the median of " + sku->name + "'s other fits)"
                               : std::string("roofline: borrowed factors (the built-in defaults)");
  }
  return hardware;
}

}  // namespace

void parse_serving(ObjectReader& parent, const std::string& base_dir, ServingSpec& spec) {
  ObjectReader reader(parent.raw("serving"), parent.path_of("serving"), parent.errors());
  int kind = 0;
  reader.read_choice("kind", kind, kKindNames);
  if (kind == 1) {
    cluster::FixedLatencyConfig fixed;
    parse_fixed(reader, fixed);
    spec = fixed;
  } else {
    LlmServingSpec llm;
    parse_llm(reader, base_dir, llm);
    spec = llm;
  }
}

json serving_to_json(const ServingSpec& spec) {
  if (const auto* fixed = std::get_if<cluster::FixedLatencyConfig>(&spec)) return fixed_to_json(*fixed);
  return llm_to_json(std::get<LlmServingSpec>(spec));
}

cluster::ModelSpec served_model(const cluster::ModelSpec& model, const LlmServingSpec& spec) {
  cluster::ModelSpec served = model;
  if (spec.weights) served.weights = *spec.weights;
  if (spec.kv_cache) served.kv_cache = *spec.kv_cache;
  return served;
}

Expected<cluster::LlmClusterConfig> resolve_llm_cluster(const LlmServingSpec& llm, const Catalog& catalog,
                                                        bool place_start_state) {
  const cluster::ModelSpec* found = catalog.find_model(llm.model);
  if (found == nullptr) {
    return Error{"serving.model: no model '" + llm.model + "' in models.json or the catalog's hf/ folder"};
  }
  const cluster::ModelSpec served = served_model(*found, llm);
  const cluster::ModelSpec* model = &served;
  auto main = pool_hardware(llm, catalog, *model, llm.sku, llm.tensor_parallel, "serving");
  if (!main) return main.error();
  cluster::LlmClusterConfig config;
  config.model = *model;
  config.sku = main->sku;
  config.tensor_parallel = llm.tensor_parallel;
  config.perf = main->perf;
  config.perf_source = main->perf_source;
  config.start_state = llm.start_state;
  for (const auto& [tag, named] : llm.pool_hardware) {
    auto pool = pool_hardware(llm, catalog, *model, named.sku.empty() ? llm.sku : named.sku,
                              named.tensor_parallel != 0 ? named.tensor_parallel : llm.tensor_parallel,
                              "serving.start_state[" + std::to_string(named.group) + "]");
    if (!pool) return pool.error();
    pool->tag = tag;
    config.pool_hardware.push_back(std::move(*pool));
  }
  static_cast<cluster::ServingOptions&>(config) = llm;  // the options as the scenario set them
  // No engine serves past the model's context (vLLM refuses to start with more); vLLM
  // serves the model's own context unless told less.
  if (model->max_context_tokens > 0 && llm.max_model_len && *llm.max_model_len > model->max_context_tokens) {
    return Error{"serving.vllm.max_model_len: " + std::to_string(*llm.max_model_len) + " tokens is beyond " +
                 model->name + "'s context of " + std::to_string(model->max_context_tokens) +
                 " tokens (its max_position_embeddings); expected at most that, or null for the model's own"};
  }
  if (llm.scheduler == cluster::BatchScheduler::kVllm && model->max_context_tokens > 0) {
    config.max_model_len = llm.max_model_len.value_or(model->max_context_tokens);
  }
  if (llm.request_timeout && !cluster::supports_aborts(llm)) {
    return Error{"serving.vllm.request_timeout_s: request timeouts need serving.scheduler vllm"};
  }
  if (llm.prompt_routing == cluster::RoutePolicy::kPrefixAffinity && !cluster::caches_prefixes(llm)) {
    return Error{"serving.routing.prompt: prefix_affinity needs serving.scheduler vllm with vllm.prefix_caching true"};
  }
  if (llm.token_routing == cluster::RoutePolicy::kPrefixAffinity) {
    return Error{"serving.routing.token: prefix_affinity routes prompts; token instances take prefilled requests "
                 "(use fewest_requests or least_kv_memory)"};
  }
  if (llm.kv_capacity_tokens && cluster::usable_kv_tokens(llm, *llm.kv_capacity_tokens) == 0) {
    return Error{"serving.kv.capacity_tokens: " + std::to_string(*llm.kv_capacity_tokens) +
                 " tokens hold no whole KV block of serving.vllm.block_size " + std::to_string(llm.vllm.block_size)};
  }
  bool has_prompt = false, has_token = false, has_serving = false;
  for (const auto& g : llm.start_state) {
    has_prompt |= g.tag == cluster::InstanceTag::kPrompt;
    has_token |= g.tag == cluster::InstanceTag::kToken;
    has_serving |= g.tag != cluster::InstanceTag::kToken;
  }
  if (!has_serving) return Error{"serving.start_state: expected at least one prompt or mixed instance"};
  if (has_prompt && !has_token) return Error{"serving.start_state: prompt instances need token instances"};
  if (!place_start_state) config.start_state.clear();
  return config;
}

nlohmann::json borrowed_roofline_factors(const ServingSpec& spec, const Catalog& catalog) {
  const auto* llm = std::get_if<LlmServingSpec>(&spec);
  if (llm == nullptr || llm->backend != LlmServingSpec::Backend::kRoofline) return nullptr;
  // By the catalog's names, as the performance model looks the factors up (the config may
  // name the model by its hf_id, the SKU by an alias).
  const cluster::ModelSpec* model = catalog.find_model(llm->model);
  const cluster::SkuSpec* sku = catalog.find_sku(llm->sku);
  if (model == nullptr || sku == nullptr) return nullptr;  // refused when the config was resolved
  const FactorsLookup lookup = catalog.lookup_factors(model->name, sku->name, llm->tensor_parallel);
  if (lookup.source == FactorsSource::kFitted) return nullptr;
  const std::string deployment = model->name + " on " + sku->name + " at TP " + std::to_string(llm->tensor_parallel);
  const bool median = lookup.source == FactorsSource::kSkuMedian;
  return nlohmann::json{
      {"source", median ? "sku_median" : "built_in"},
      {"model", model->name},
      {"sku", sku->name},
      {"tensor_parallel", llm->tensor_parallel},
      {"note", "no roofline fit for " + deployment + " in the catalog: its latencies use borrowed factors (" +
                   (median ? "the median of " + sku->name + "'s other fits" : std::string("the built-in defaults")) +
                   "); fit them with `meshsim calibrate --profile PROFILE.csv` and pass the folder as --catalog"}};
}

}  // namespace meshsim::configs
