#pragma once
// What every command does alike with its inputs: exit codes, the one-line failure, a
// --trace file's format, a scenario with the command line's overrides, --rate-scale and
// --seed. The commands (tools/cli) and the Python package both use these.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "configs/scenario_config.hpp"
#include "sim/engine/expected.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::cli {

// Exit codes, so scripts can tell failures apart.
inline constexpr int kExitOk = 0;
inline constexpr int kExitExpectationsUnmet = 1;  // a scenario script's "expect" was not met
inline constexpr int kExitBadInput = 2;   // a config, trace or option is wrong
inline constexpr int kExitOutputError = 3;  // the run folder could not be written

// Prints "error: MESSAGE" and returns the exit code, so each failure is one line.
int fail(std::ostream& err, const std::string& message, int code);

// A --trace file with --trace-format (auto: azure for .csv, mooncake for .jsonl/.json).
Expected<traces::TraceFileSpec> trace_file_spec(const std::string& path, const std::string& format_name);

// What a command changes in the scenario it loads, said once so that every command
// applies each the same way (a command cannot take --catalog and forget it).
struct ScenarioOverrides {
  std::optional<std::string> trace{};  // --trace: replaces the workload's source (window, rate scale and limits stay)
  std::string trace_format = "auto";   // --trace-format (auto: azure for .csv, mooncake for .jsonl/.json)
  std::optional<std::string> seed{};   // --seed: the scenario's seed
  std::vector<std::string> sets{};     // --set "key.path=value", applied to the file's tree before it is checked
  std::optional<std::string> catalog{};  // --catalog DIR: the user's catalog over the bundled one
};

// The scenario at `config_path` with a command's overrides applied and checked. Errors
// name the file, option or assignment.
Expected<configs::ScenarioConfig> load_scenario_for_command(const std::string& config_path,
                                                            const ScenarioOverrides& overrides);

// A command's --rate-scale, checked, as the workload's rate scale (none: the config's).
Status apply_rate_scale(configs::ScenarioConfig& config, const std::optional<double>& rate_scale);

// A --seed value: digits only, at most 2^64 - 1 (no sign, exponent or fraction).
std::optional<std::uint64_t> parse_seed(const std::string& text);

}  // namespace meshsim::cli
