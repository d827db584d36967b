#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// vLLM's default KV block, which the replays use.
inline constexpr std::uint32_t kVllmBlockSize = 16;
// The most requests one reference row replays (rate_per_s x duration_s; the reference
// rows hold about 12,000).
inline constexpr std::uint64_t kMaxReferenceRequests = 10'000'000;

// One row of a serving reference file (the layout of ../shared/reference/
// vllm-h100-measured.csv): a deployment on one server, a shared-prefix workload at a
// constant (or Poisson) rate, and what was measured.
struct ServingReferenceRow {
  std::size_t line = 0;  // in the file, for messages
  std::string experiment;
  std::string model;  // a Hugging Face id or a catalog name
  std::uint32_t tensor_parallel = 1;
  std::string gpu;  // a SKU name or alias
  std::uint32_t max_num_batched_tokens = 0, max_num_seqs = 0, max_model_len = 0;
  std::string profile;
  std::uint32_t system_prompt_len = 0, question_len = 0, output_len = 0;
  std::uint32_t num_unique_system_prompts = 1, num_users_per_system_prompt = 1;
  bool multi_turn_chat = false;  // then prompt_len_mean is required (see reference_scenario)
  bool poisson_arrivals = false;  // `arrival`: constant (the default) or poisson
  double rate_per_s = 0, duration_s = 0;
  // Measured.
  double prompt_len_mean = 0;
  std::uint64_t requests = 0, failures = 0;
  double e2e_mean_s = 0, e2e_p50_s = 0, e2e_p90_s = 0, e2e_p99_s = 0;
  double ttft_mean_s = 0, ttft_p50_s = 0, ttft_p90_s = 0, ttft_p99_s = 0;
  double requests_per_s = 0;

  // The server kept up: it completed what arrived, none failed.
  bool kept_up() const { return failures == 0 && requests_per_s >= 0.95 * rate_per_s; }
  // The mean time between output tokens: (E2E - TTFT) over the output_len - 1 gaps (the
  // server generated output_len tokens; end-of-sequence was ignored).
  double inter_token_mean_s() const { return output_len > 1 ? (e2e_mean_s - ttft_mean_s) / (output_len - 1) : 0; }
  // Tokens of the prompt the system prompt takes once tokenised: the measured prompt is
  // longer than system_prompt_len + question_len (chat template, tokenizer), in proportion.
  std::uint32_t system_prompt_tokens() const;
};

// Reads a reference CSV; errors name file:line and the column.
Expected<std::vector<ServingReferenceRow>> read_serving_reference(const std::string& path);

// The scenario that replays a row: its model (by Hugging Face id), SKU, TP degree and
// vLLM limits on one instance under the vLLM scheduler, prefix caching and the step-time
// model, vLLM's default 90% of GPU memory; its shared_prefix workload at the row's rate
// (constant or Poisson arrivals) for its duration, prompts as long as measured. Multi-turn
// history is not added beyond what the measured mean prompt holds (the measured prompt
// lengths show next to none), so a multi-turn row must carry prompt_len_mean.
// `client_timeout` (if any): a request its client gave up on is aborted, as
// inference-perf's client disconnects and vLLM drops it.
ScenarioConfig reference_scenario(const ServingReferenceRow& row, std::uint64_t seed,
                                  std::optional<SimTime> client_timeout);

}  // namespace meshsim::configs
