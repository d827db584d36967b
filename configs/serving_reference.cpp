#include "configs/serving_reference.hpp"

#include "configs/reference_table.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>

#include "traces/field_parsing.hpp"

namespace meshsim::configs {
std::uint32_t ServingReferenceRow::system_prompt_tokens() const {
  const double given = double(system_prompt_len) + question_len;
  const double scale = given > 0 && prompt_len_mean > 0 ? prompt_len_mean / given : 1.0;
  return static_cast<std::uint32_t>(std::lround(system_prompt_len * scale));
}

Expected<std::vector<ServingReferenceRow>> read_serving_reference(const std::string& path) {
  auto table = ReferenceTable::open(path, {"model", "tensor_parallel", "gpu", "max_num_batched_tokens", "max_num_seqs",
                                            "max_model_len", "system_prompt_len", "question_len", "output_len",
                                            "num_unique_system_prompts", "num_users_per_system_prompt", "rate_per_s",
                                            "duration_s"});
  if (!table) return table.error();
  std::vector<ServingReferenceRow> rows;
  while (true) {
    auto more = table->next();
    if (!more) return more.error();
    if (!*more) break;
    const std::string where = table->where();
    std::string bad;
    const auto text = [&](const char* name) { return table->text(name); };
    // A measured figure may be absent (a column the file lacks): 0 then.
    const auto number_of = [&](const char* name, bool required) -> double {
      const std::string t = text(name);
      if (t.empty() && !required) return 0.0;
      double v = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0 || v > 1e12) {
        if (bad.empty()) bad = std::string(name) + ": expected a non-negative number, got " + traces::quote_for_message(t);
        return 0.0;
      }
      return v;
    };
    const auto count_of = [&](const char* name) -> std::uint32_t {
      const double v = number_of(name, true);
      if (bad.empty() && (v < 1 || v > traces::kMaxTokenCount || v != std::floor(v))) {
        bad = std::string(name) + ": expected a positive integer up to 10000000, got " + traces::quote_for_message(text(name));
      }
      return static_cast<std::uint32_t>(v);
    };
    ServingReferenceRow r;
    r.line = table->line();
    r.experiment = text("experiment");
    r.model = text("model");
    r.gpu = text("gpu");
    r.profile = text("profile");
    r.tensor_parallel = count_of("tensor_parallel");
    r.max_num_batched_tokens = count_of("max_num_batched_tokens");
    r.max_num_seqs = count_of("max_num_seqs");
    r.max_model_len = count_of("max_model_len");
    r.system_prompt_len = static_cast<std::uint32_t>(number_of("system_prompt_len", true));
    r.question_len = count_of("question_len");
    r.output_len = count_of("output_len");
    r.num_unique_system_prompts = count_of("num_unique_system_prompts");
    r.num_users_per_system_prompt = count_of("num_users_per_system_prompt");
    // Text the replay honours, or refused (any text was read as "no" before).
    const std::string multi = text("multi_turn_chat");
    if (multi == "True" || multi == "true" || multi == "1") {
      r.multi_turn_chat = true;
    } else if (!(multi.empty() || multi == "False" || multi == "false" || multi == "0")) {
      if (bad.empty()) bad = "multi_turn_chat: expected True or False, got " + traces::quote_for_message(multi);
    }
    const std::string arrival = text("arrival");
    if (arrival == "poisson") {
      r.poisson_arrivals = true;
    } else if (!(arrival.empty() || arrival == "constant")) {
      if (bad.empty()) {
        bad = "arrival: expected constant or poisson (the arrival processes the replay models), got " +
              traces::quote_for_message(arrival);
      }
    }
    r.rate_per_s = number_of("rate_per_s", true);
    r.duration_s = number_of("duration_s", true);
    r.prompt_len_mean = number_of("prompt_len_mean", false);
    r.requests = static_cast<std::uint64_t>(number_of("requests", false));
    r.failures = static_cast<std::uint64_t>(number_of("failures", false));
    r.e2e_mean_s = number_of("e2e_mean_s", false);
    r.e2e_p50_s = number_of("e2e_p50_s", false);
    r.e2e_p90_s = number_of("e2e_p90_s", false);
    r.e2e_p99_s = number_of("e2e_p99_s", false);
    r.ttft_mean_s = number_of("ttft_mean_s", false);
    r.ttft_p50_s = number_of("ttft_p50_s", false);
    r.ttft_p90_s = number_of("ttft_p90_s", false);
    r.ttft_p99_s = number_of("ttft_p99_s", false);
    r.requests_per_s = number_of("requests_per_s", false);
    if (bad.empty() && r.prompt_len_mean > traces::kMaxTokenCount) {
      bad = "prompt_len_mean: expected a token count up to 10000000, got " + traces::quote_for_message(text("prompt_len_mean"));
    }
    if (bad.empty() && r.multi_turn_chat && r.prompt_len_mean <= 0) {
      bad = "prompt_len_mean: expected the measured mean prompt with multi_turn_chat True (the replay takes each "
            "turn's prompt, history included, as measured)";
    }
    if (bad.empty() && r.model.empty()) bad = "model: expected a model name";
    if (bad.empty() && r.gpu.empty()) bad = "gpu: expected a SKU name";
    if (bad.empty() && !(r.rate_per_s > 0 && r.rate_per_s <= 1e5)) bad = "rate_per_s: expected a rate in (0, 1e5]";
    if (bad.empty() && !(r.duration_s > 0 && r.duration_s <= 1e7)) bad = "duration_s: expected (0, 1e7] seconds";
    // A row replays rate x duration requests: bounded, so a row cannot run for days.
    if (bad.empty() && r.rate_per_s * r.duration_s > kMaxReferenceRequests) {
      bad = "rate_per_s x duration_s: expected at most " + std::to_string(kMaxReferenceRequests) +
            " requests to replay, got " + traces::quote_for_message(std::to_string(r.rate_per_s * r.duration_s));
    }
    if (bad.empty() && r.max_num_batched_tokens < r.max_num_seqs) {
      bad = "max_num_batched_tokens: expected at least max_num_seqs";
    }
    if (!bad.empty()) return Error{where + bad};
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return Error{path + ": no rows"};
  return rows;
}

ScenarioConfig reference_scenario(const ServingReferenceRow& row, std::uint64_t seed,
                                  std::optional<SimTime> client_timeout) {
  ScenarioConfig config;
  config.name = row.experiment.empty() ? "reference-row-" + std::to_string(row.line) : row.experiment;
  config.seed = seed;
  traces::GeneratorSpec generator;
  generator.name = config.name;
  generator.arrivals.kind = row.poisson_arrivals ? traces::ArrivalSpec::Kind::kPoisson : traces::ArrivalSpec::Kind::kConstant;
  generator.stages = {traces::LoadStage{row.rate_per_s, SimTime::from_seconds(row.duration_s)}};
  const std::uint32_t system = row.system_prompt_tokens();
  const double prompt = row.prompt_len_mean > 0 ? row.prompt_len_mean : double(row.system_prompt_len) + row.question_len;
  generator.prompt_tokens.value = static_cast<std::uint32_t>(std::max(1.0, std::round(prompt) - system));
  generator.output_tokens.value = row.output_len;
  generator.shared_prefix = traces::SharedPrefixSpec{row.num_unique_system_prompts, row.num_users_per_system_prompt,
                                                     system, false, 0};
  config.workload.source = generator;
  auto& serving = config.serving.emplace<LlmServingSpec>();
  serving.model = row.model;
  serving.sku = row.gpu;
  serving.tensor_parallel = row.tensor_parallel;
  serving.backend = LlmServingSpec::Backend::kStepModel;
  serving.scheduler = cluster::BatchScheduler::kVllm;
  serving.vllm.max_num_seqs = row.max_num_seqs;
  serving.vllm.max_num_batched_tokens = row.max_num_batched_tokens;
  serving.vllm.block_size = kVllmBlockSize;
  serving.vllm.prefix_caching = true;
  serving.max_model_len = row.max_model_len;
  serving.request_timeout = client_timeout;
  serving.kv_reserve_fraction = 0.1;  // vLLM's gpu_memory_utilization 0.9
  serving.start_state = std::vector<cluster::InstanceGroup>(1);  // one mixed instance
  return config;
}

}  // namespace meshsim::configs
