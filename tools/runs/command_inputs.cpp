#include "tools/runs/command_inputs.hpp"

#include <charconv>
#include <filesystem>
#include <ostream>

#include "configs/overrides.hpp"
#include "sim/engine/number_text.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::cli {

int fail(std::ostream& err, const std::string& message, int code) {
  err << "error: " << message << '\n';
  return code;
}

Expected<traces::TraceFileSpec> trace_file_spec(const std::string& path, const std::string& format_name) {
  traces::TraceFileSpec spec;
  spec.path = path;
  std::string name = format_name;
  if (name == "auto") {
    const auto extension = std::filesystem::path(path).extension().string();
    if (extension == ".csv") {
      name = "azure";
    } else if (extension == ".jsonl" || extension == ".json") {
      name = "mooncake";
    } else {
      return Error{path + ": cannot tell the trace format from the extension '" + extension +
                   "': pass --trace-format azure|mooncake (or use a config with a column mapping)"};
    }
  }
  const auto format = traces::kTraceFormatNames.parse(name);
  if (!format || *format == traces::TraceFormat::kCsv || *format == traces::TraceFormat::kJsonl) {
    return Error{"--trace-format: expected auto, azure or mooncake, got '" + name +
                 "' (generic csv/jsonl traces need a column mapping in a config file)"};
  }
  spec.format = *format;
  return spec;
}

Status apply_rate_scale(configs::ScenarioConfig& config, const std::optional<double>& rate_scale) {
  if (!rate_scale) return Ok{};
  if (!traces::rate_scale_in_range(*rate_scale)) {
    return Error{"--rate-scale: expected a factor in " + traces::rate_scale_range() + ", got " + number_text(*rate_scale)};
  }
  config.workload.rate_scale = *rate_scale;
  return Ok{};
}

// Digits only, at most 2^64 - 1: no sign, exponent or fraction (CLI11 would wrap -1 and
// round 1e23 to 2^64 - 1).
std::optional<std::uint64_t> parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
  return value;
}

Expected<configs::ScenarioConfig> load_scenario_for_command(const std::string& config_path,
                                                            const ScenarioOverrides& given) {
  std::vector<configs::Override> overrides;
  for (const std::string& assignment : given.sets) {
    auto parsed = configs::parse_override(assignment);
    if (!parsed) return Error{"--set: " + parsed.error().message};
    overrides.push_back(std::move(*parsed));
  }
  auto config = configs::load_scenario_with(config_path, overrides);
  if (!config) return config.error();
  if (given.trace) {
    auto spec = trace_file_spec(*given.trace, given.trace_format);
    if (!spec) return spec.error();
    config->workload.source = *spec;
  }
  if (given.seed) {
    const auto parsed = parse_seed(*given.seed);
    if (!parsed) return Error{"--seed: expected an integer in [0, 2^64), got '" + *given.seed + "'"};
    config->seed = *parsed;
  }
  if (given.catalog) config->catalog = *given.catalog;
  return config;
}

}  // namespace meshsim::cli
