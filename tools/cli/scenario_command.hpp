#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace meshsim::cli {

// `meshsim scenario FILE`: plays a script of scheduling-core calls against a simulated
// cluster and clock (the interpreter is sim/script's ScriptSession), printing one JSON
// object per step (see scheduler/scheduling-core.md, "Scenario scripts"). A bad script is reported with
// its step index and field and exit code 2; a call that fails in the API is a normal
// `"success": false` result.
struct ScenarioCommandOptions {
  std::string script;
  bool check = false;  // run the invariant checker after every step (exit 70 if broken)
  std::string metrics;  // write the Prometheus metrics here at the end (empty: none)
  bool allow_files = true;  // false: save_state / load_state fail (sandboxed runs, fuzzing)
};
int run_scenario_command(const ScenarioCommandOptions& options, std::ostream& out, std::ostream& err);
// The same on a script already parsed; `options.script` names it in messages.
int run_scenario(const nlohmann::json& script, const ScenarioCommandOptions& options, std::ostream& out,
                 std::ostream& err);

}  // namespace meshsim::cli
