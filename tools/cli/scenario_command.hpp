#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::cli {

// `meshsim scenario FILE`: plays a script of scheduling-core calls against a simulated
// cluster and clock, printing one JSON object per step (see the README's "Scenario
// scripts"). A bad script is reported with its step index and field and exit code 2; a
// call that fails in the API is a normal `"success": false` result.
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

// A scheduling core with its simulated cluster and clock (and serving instances, given a
// "serving" object), driven one call at a time: a scenario script's steps without the
// script, for meshsim.Scheduler (Python). The calls, their arguments and their results
// are the script's.
class ScenarioSession {
 public:
  // `setup`: a script's nodes, serving and scaling objects (no steps); errors name `name`.
  static Expected<std::unique_ptr<ScenarioSession>> create(const nlohmann::json& setup, const std::string& name,
                                                           bool allow_files);
  ~ScenarioSession();
  // The call's result object as a script step prints it. An unknown call or a bad
  // argument is an Error naming the call and the key, and changes nothing; a call the API
  // refuses is a result with "success": false.
  Expected<nlohmann::json> call(const std::string& name, const nlohmann::json& args);
  // The simulated clock, in seconds.
  double now() const;
  std::vector<std::string> check_invariants() const;
  // The scheduling core's Prometheus text (the schedulemesh_* metrics).
  std::string prometheus_text() const;
  static std::vector<std::string> call_names();

 private:
  ScenarioSession();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshsim::cli
