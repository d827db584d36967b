#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"
#include "sim/script/script_calls.hpp"
#include "sim/script/script_world.hpp"

namespace meshsim::script {

// The scenario-script interpreter: a ScriptWorld driven one call at a time, by the steps
// of `meshsim scenario FILE` and by meshsim.Scheduler in Python alike. The calls, their
// arguments and their results are the script's (script_calls.hpp).
class ScriptSession {
 public:
  // `setup`: a script's nodes, serving and scaling objects (no steps); errors name `name`.
  // `states`: where save_state and load_state go (null: both are refused).
  static Expected<std::unique_ptr<ScriptSession>> create(const nlohmann::json& setup, const std::string& name,
                                                         StateStore* states);
  // A script's top-level keys: the setup's, and "steps" when `steps`.
  static Status check_keys(const nlohmann::json& script, const std::string& name, bool steps);

  // A step read and checked, ready to run: it returns the line a script prints,
  // {"step", "call", "result", "time"} and the step's "name" when it has one.
  struct Step {
    std::function<nlohmann::json()> run;
  };
  // `index` numbers the step in its line; `where` names it in messages ("steps[3]"). An
  // unknown call, an unknown key or a bad argument is an Error naming it.
  Expected<Step> parse(std::size_t index, const nlohmann::json& step, const std::string& where);

  // The call's result object as a script step prints it. An unknown call or a bad
  // argument is an Error naming the call and the key, and changes nothing; a call the API
  // refuses is a result with "success": false.
  Expected<nlohmann::json> call(const std::string& name, const nlohmann::json& args);

  double now() const { return world_.clock.now_s(); }
  std::vector<std::string> check_invariants() const { return world_.check_invariants(); }
  const scheduler::Scheduler& scheduler() const { return world_.scheduler; }

 private:
  ScriptSession(const nlohmann::json& setup, const std::string& name, StateStore* states)
      : world_(setup, name, states) {}

  ScriptWorld world_;  // not movable: the core holds references into it
  std::size_t calls_ = 0;
};

}  // namespace meshsim::script
