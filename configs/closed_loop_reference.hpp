#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"
#include "sim/perf/hardware.hpp"

namespace meshsim::configs {

// vLLM's scheduler limits where a benchmark sets none: its defaults on GPUs of 70 GiB and
// more other than A100 (EngineArgs' batch defaults for the API server).
inline constexpr std::uint32_t kVllmDefaultBatchedTokens = 8192;
inline constexpr std::uint32_t kVllmDefaultMaxSeqs = 1024;
// The most clients a row may have (a benchmark's concurrency; the given rows stop at 144).
inline constexpr std::uint32_t kMaxClosedLoopClients = 100'000;

// One row of a closed-loop benchmark table (NVIDIA AIConfigurator's silicon table layout:
// ../shared/reference/gpu-skus/aic_vllm_agg.csv): `clients` concurrent clients, each
// sending its next request when its last one finished, every request `prompt_tokens` in
// and `output_tokens` out, on one server at a tensor-parallel degree; the mean TTFT and
// time per output token measured.
struct ClosedLoopRow {
  std::size_t line = 0;  // in the file, for messages
  std::string id;
  std::string model;  // model_path: a Hugging Face id or a catalog name
  std::string gpu;    // system: a SKU name or alias
  std::optional<cluster::Precision> weights;  // precision; unset (blank): the model's own
  std::uint32_t prompt_tokens = 0, output_tokens = 0, clients = 0, tensor_parallel = 1;
  double ttft_s = 0, tpot_s = 0;  // measured means
  // Why the row cannot be modelled (another backend, disaggregated serving, 4-bit weights,
  // data-parallel attention, ...), naming the column; empty: it can. Such rows are listed
  // and left out, not an error: one table holds both kinds.
  std::string refused;

  // "1024x1024": its prompt and output lengths, as a fit's split names them.
  std::string shape() const { return std::to_string(prompt_tokens) + "x" + std::to_string(output_tokens); }
};

// Whether the CSV file's header is this layout's (the other reference layout is
// serving_reference.hpp's); false for a file that cannot be read, whose reader says why.
bool is_closed_loop_table(const std::string& path);

// Reads the table; errors name file:line and the column.
Expected<std::vector<ClosedLoopRow>> read_closed_loop_reference(const std::string& path);

// Adds the models of `rows` the catalog lacks from the table's folder: the Hugging Face
// config.json of "<org>/<name>" as `model_configs/<org>--<name>.json` beside it
// (AIConfigurator's layout), else the one file of that org whose name ends with <name>
// (a repository Hugging Face renamed: meta-llama/Meta-Llama-3.1-70B is now
// meta-llama/Llama-3.1-70B), read as any config.json is. A model found nowhere is left
// for the caller to name; errors name the file and key.
Status add_table_models(Catalog& catalog, const std::string& table_path, const std::vector<ClosedLoopRow>& rows);

// The scenario that replays a row: its model in the row's precision on one instance of
// its SKU at its TP degree, vLLM's scheduler with its default limits for that GPU,
// prefix caching on (random prompts share nothing), the step-time model, 90% of GPU
// memory; `requests_per_client` requests per client, all arriving at once and held to
// `clients` in the system at a time (workload.max_concurrency): a closed loop.
ScenarioConfig closed_loop_scenario(const ClosedLoopRow& row, std::uint32_t requests_per_client, std::uint64_t seed);

}  // namespace meshsim::configs
