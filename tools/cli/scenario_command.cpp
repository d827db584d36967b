#include "tools/cli/scenario_command.hpp"

#include <ostream>
#include <vector>

#include "configs/config_file.hpp"
#include "sim/script/script_session.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/scheduler_prometheus.hpp"
#include "tools/cli/script_expectations.hpp"
#include "tools/runs/state_file.hpp"

namespace meshsim::cli {
namespace {

using nlohmann::json;

// The step's "expect" and "expect_time" checked against the line it printed.
std::vector<std::string> unmet(const json& step, const json& line) {
  std::vector<std::string> out;
  if (step.contains("expect")) out = unmet_expectations(step["expect"], line["result"]);
  if (step.contains("expect_time")) {
    for (auto& message : unmet_expectations(step["expect_time"], line["time"], "time")) out.push_back(std::move(message));
  }
  return out;
}

}  // namespace

int run_scenario_command(const ScenarioCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto script = configs::read_config_file(options.script);
  if (!script) {
    err << "error: " << script.error().message << "\n";
    return kExitBadInput;
  }
  return run_scenario(*script, options, out, err);
}

int run_scenario(const json& script, const ScenarioCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto bad_input = [&](const Error& error) {
    out.flush();
    err << "error: " << error.message << "\n";
    return kExitBadInput;
  };
  if (!script.is_object() || !script.contains("steps") || !script["steps"].is_array()) {
    return bad_input(Error{options.script + ": expected {\"nodes\": [...] (optional), \"steps\": [...]}"});
  }
  if (auto checked = script::ScriptSession::check_keys(script, options.script, true); !checked) {
    return bad_input(checked.error());
  }
  json setup = json::object();  // the script without its steps
  for (const char* key : {"nodes", "serving", "scaling"}) {
    if (script.contains(key)) setup[key] = script[key];
  }
  StateFiles files;
  auto session = script::ScriptSession::create(setup, options.script, options.allow_files ? &files : nullptr);
  if (!session) return bad_input(session.error());
  const json& steps = script["steps"];
  // The whole script is checked before step 0 runs.
  std::vector<script::ScriptSession::Step> parsed;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    auto step = (*session)->parse(i, steps[i], "steps[" + std::to_string(i) + "]");
    if (!step) return bad_input(step.error());
    parsed.push_back(std::move(*step));
  }
  std::size_t unmet_count = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json line = parsed[i].run();
    out << line.dump() << "\n";
    for (const auto& message : unmet(steps[i], line)) {
      ++unmet_count;
      err << "unmet: " << options.script << ": steps[" << i << "]"
          << (line.contains("name") ? " (" + line["name"].get<std::string>() + ")" : "") << ": " << message << "\n";
    }
    if (const auto& result = line["result"]; result.contains("warnings")) {
      for (const auto& warning : result["warnings"]) err << "warning: steps[" << i << "]: " << warning.get<std::string>() << "\n";
    }
    if (options.check) {
      if (const auto problems = (*session)->check_invariants(); !problems.empty()) {
        err << "error: invariant broken after steps[" << i << "]: " << problems.front() << "\n";
        return 70;
      }
    }
  }
  if (!options.metrics.empty()) {
    AtomicFile file(options.metrics);
    write_scheduler_metrics(file.stream(), (*session)->scheduler());
    if (auto written = file.commit(); !written) {
      err << "error: " << options.metrics << ": " << written.error().message << "\n";
      return kExitOutputError;
    }
  }
  return unmet_count > 0 ? kExitExpectationsUnmet : kExitOk;
}

}  // namespace meshsim::cli
