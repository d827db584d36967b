#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "scheduler/scheduler.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/script/script_clock.hpp"
#include "sim/script/serving_world.hpp"

namespace meshsim::script {

// Where save_state and load_state keep the core's state. The file format lives at the
// edge (tools/cli/state_file); a world given none refuses both calls.
class StateStore {
 public:
  virtual ~StateStore() = default;
  virtual Status save(const std::string& path, const scheduler::SchedulerState& state) = 0;
  virtual Expected<scheduler::SchedulerState> load(const std::string& path) = 0;
};

// Thrown for a step the script got wrong (not for a call that fails in the API).
struct ScriptError {
  std::string message;
};

// What a script's calls act on: the scheduling core over the script's nodes and, given a
// "serving" object, serving instances, all on one simulation and its clock.
struct ScriptWorld {
  // `setup`: the script's nodes, serving and scaling objects; `file` names it in errors
  // (thrown as ScriptError).
  ScriptWorld(const nlohmann::json& setup, std::string file, StateStore* states);
  ScriptWorld(const ScriptWorld&) = delete;
  ScriptWorld& operator=(const ScriptWorld&) = delete;

  // The clock moves `seconds`; agents that are not hung heartbeat at its end.
  nlohmann::json advance(double seconds);
  std::vector<std::string> check_invariants() const;

  std::string file;
  StateStore* states;  // null: save_state and load_state are refused
  engine::Simulation sim{1};
  ScriptClock clock{sim};
  scheduler::Scheduler scheduler{clock, &clock, &clock};
  std::unique_ptr<ServingWorld> serving;  // null without a "serving" object
};

}  // namespace meshsim::script
