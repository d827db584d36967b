#include "configs/closed_loop_reference.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include "configs/hf_model.hpp"
#include "configs/reference_table.hpp"
#include "configs/serving_reference.hpp"
#include "traces/field_parsing.hpp"

namespace meshsim::configs {
namespace {

const std::vector<std::string> kRequired = {"model_path", "system",  "isl",           "osl",
                                            "batch_size", "tp_size", "silicon_ttft_ms", "silicon_tpot_ms"};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A precision column's text: 16-bit, fp8, blank (unset), or a reason it is not modelled.
struct PrecisionText {
  std::optional<cluster::Precision> precision;
  std::string refused;
};
PrecisionText read_precision(const std::string& column, const std::string& text) {
  const std::string t = lower(text);
  if (t.empty()) return {};
  if (t == "fp8" || t == "fp8_block" || t == "float8") return {cluster::Precision::kFp8, ""};
  if (t == "bf16" || t == "fp16" || t == "float16" || t == "bfloat16") return {cluster::Precision::k16Bit, ""};
  return {std::nullopt, column + " " + traces::quote_for_message(text) +
                            ": only 16-bit and fp8 weights are modelled (4-bit and integer formats are not)"};
}

}  // namespace

bool is_closed_loop_table(const std::string& path) { return ReferenceTable::open(path, kRequired).has_value(); }

Expected<std::vector<ClosedLoopRow>> read_closed_loop_reference(const std::string& path) {
  auto table = ReferenceTable::open(path, kRequired, "AIConfigurator's layout");
  if (!table) return table.error();
  std::vector<ClosedLoopRow> rows;
  while (true) {
    auto more = table->next();
    if (!more) return more.error();
    if (!*more) break;
    const std::string where = table->where();
    const auto text = [&](const char* name) { return table->text(name); };
    std::string bad;
    const auto number_of = [&](const char* name) -> double {
      const std::string t = text(name);
      double v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v <= 0 || v > 1e9) {
        if (bad.empty()) bad = std::string(name) + ": expected a positive number, got " + traces::quote_for_message(t);
        return 0.0;
      }
      return v;
    };
    const auto count_of = [&](const char* name) -> std::uint32_t {
      const double v = number_of(name);
      if (bad.empty() && (v > traces::kMaxTokenCount || v != std::floor(v))) {
        bad = std::string(name) + ": expected a positive integer up to 10000000, got " +
              traces::quote_for_message(text(name));
      }
      return static_cast<std::uint32_t>(v);
    };
    // A parallel degree a column may leave blank (or 0: not used), else a count.
    const auto degree_of = [&](const char* name) -> std::uint32_t {
      const std::string t = text(name);
      return t.empty() || t == "0" ? 0 : count_of(name);
    };
    ClosedLoopRow r;
    r.line = table->line();
    r.id = text("id");
    r.model = text("model_path");
    r.gpu = text("system");
    r.prompt_tokens = count_of("isl");
    r.output_tokens = count_of("osl");
    r.clients = count_of("batch_size");
    r.tensor_parallel = count_of("tp_size");
    r.ttft_s = number_of("silicon_ttft_ms") * 1e-3;
    r.tpot_s = number_of("silicon_tpot_ms") * 1e-3;
    const std::uint32_t pipeline = degree_of("pp_size"), attention_dp = degree_of("attention_dp_size");
    const std::uint32_t moe_tp = degree_of("moe_tp_size"), moe_ep = degree_of("moe_ep_size");
    if (bad.empty() && r.clients > kMaxClosedLoopClients) {
      bad = "batch_size: expected 1 to " + std::to_string(kMaxClosedLoopClients) + " clients, got " +
            traces::quote_for_message(text("batch_size"));
    }
    if (bad.empty() && r.model.empty()) bad = "model_path: expected a model name";
    if (bad.empty() && r.gpu.empty()) bad = "system: expected a SKU name";
    if (!bad.empty()) return Error{where + bad};

    // What the row is, refused by the first column that puts it out of reach.
    const auto refuse = [&r](std::string why) {
      if (r.refused.empty()) r.refused = std::move(why);
    };
    if (const std::string backend = text("backend"); !backend.empty() && lower(backend) != "vllm") {
      refuse("backend " + traces::quote_for_message(backend) + ": only vLLM's servers are modelled");
    }
    if (const std::string mode = lower(text("mode")); !mode.empty() && mode != "agg") {
      refuse("mode " + traces::quote_for_message(text("mode")) +
             ": only aggregated serving (prefill and decode on the same GPUs) is modelled");
    }
    const PrecisionText precision = read_precision("precision", text("precision"));
    refuse(precision.refused);
    r.weights = precision.precision;
    for (const char* name : {"gemm_quant_mode", "moe_quant_mode"}) {
      const PrecisionText mode = read_precision(name, text(name));
      refuse(mode.refused);
      if (mode.precision && r.weights && *mode.precision != *r.weights) {
        refuse(std::string(name) + " " + traces::quote_for_message(text(name)) + " differs from precision " +
               traces::quote_for_message(text("precision")) + ": one precision for all weights is modelled");
      }
      if (!r.weights) r.weights = mode.precision;
    }
    if (pipeline > 1) refuse("pp_size " + std::to_string(pipeline) + ": pipeline parallelism is not modelled");
    if (attention_dp > 1) {
      refuse("attention_dp_size " + std::to_string(attention_dp) +
             ": data-parallel attention (engines sharing experts over more GPUs) is not modelled");
    }
    // Experts split over the attention's GPUs (by tensor or expert parallelism alike: the
    // same weights per GPU) is what an instance at tp_size is; 1 x 1 is the columns'
    // default, also where there are no experts (a dense model's rows).
    if (moe_tp && moe_ep && moe_tp * moe_ep > 1 && moe_tp * moe_ep != r.tensor_parallel) {
      refuse("moe_tp_size x moe_ep_size " + std::to_string(moe_tp * moe_ep) + ": experts over other GPUs than the " +
             "attention's tp_size " + std::to_string(r.tensor_parallel) + " are not modelled");
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return Error{path + ": no rows"};
  return rows;
}

Status add_table_models(Catalog& catalog, const std::string& table_path, const std::vector<ClosedLoopRow>& rows) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(table_path).parent_path() / "model_configs";
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return Ok();
  std::vector<std::string> files;  // file names, sorted
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  }
  if (ec) return Error{folder.string() + ": cannot list (" + ec.message() + ")"};
  std::sort(files.begin(), files.end());
  const auto ends_with = [](const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() && lower(text.substr(text.size() - tail.size())) == lower(tail);
  };
  for (const ClosedLoopRow& row : rows) {
    if (catalog.find_model(row.model) != nullptr) continue;
    const auto slash = row.model.find('/');
    if (slash == std::string::npos) continue;
    const std::string org = row.model.substr(0, slash), name = row.model.substr(slash + 1);
    std::vector<std::string> found;
    for (const std::string& file : files) {
      const std::string stem = file.substr(0, file.size() - 5);
      if (lower(stem) == lower(org + "--" + name)) found = {file};
    }
    if (found.empty()) {
      for (const std::string& file : files) {
        const std::string stem = file.substr(0, file.size() - 5);
        if (lower(stem.substr(0, org.size() + 2)) == lower(org + "--") && ends_with(stem, name)) found.push_back(file);
      }
    }
    if (found.size() != 1) continue;  // none, or ambiguous: the caller names the model
    auto model = model_from_hf_config((folder / found.front()).string(), row.model);
    if (!model) return model.error();
    catalog.models[row.model] = std::move(*model);
  }
  return Ok();
}

ScenarioConfig closed_loop_scenario(const ClosedLoopRow& row, std::uint32_t requests_per_client, std::uint64_t seed) {
  ScenarioConfig config;
  config.name = row.id.empty() ? "closed-loop-row-" + std::to_string(row.line) : row.id;
  config.seed = seed;
  traces::GeneratorSpec generator;
  generator.name = config.name;
  // Every request at once (a microsecond apart), the concurrency limit holding them back.
  generator.arrivals.kind = traces::ArrivalSpec::Kind::kConstant;
  generator.arrivals.rate_per_s = 1e6;
  generator.requests = std::uint64_t{row.clients} * requests_per_client;
  generator.prompt_tokens.value = row.prompt_tokens;
  generator.output_tokens.value = row.output_tokens;
  config.workload.source = generator;
  config.workload.max_concurrency = row.clients;
  auto& serving = config.serving.emplace<LlmServingSpec>();
  serving.model = row.model;
  serving.weights = row.weights;
  serving.sku = row.gpu;
  serving.tensor_parallel = row.tensor_parallel;
  serving.backend = LlmServingSpec::Backend::kStepModel;
  serving.scheduler = cluster::BatchScheduler::kVllm;
  serving.vllm.max_num_seqs = std::max(kVllmDefaultMaxSeqs, row.clients);
  serving.vllm.max_num_batched_tokens = kVllmDefaultBatchedTokens;
  serving.vllm.block_size = kVllmBlockSize;
  serving.vllm.prefix_caching = true;
  serving.kv_reserve_fraction = 0.1;  // vLLM's gpu_memory_utilization 0.9
  serving.start_state = std::vector<cluster::InstanceGroup>(1);  // one mixed instance
  return config;
}

}  // namespace meshsim::configs
