#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "configs/object_reader.hpp"
#include "sim/script/script_world.hpp"

namespace meshsim::script {

// A call with its arguments read and checked, ready to run: its result object.
using Action = std::function<nlohmann::json()>;

// One call a scenario script (and meshsim.Scheduler in Python) knows. Its arguments are
// read when a step is parsed, so a whole script is checked before its first step runs and
// a bad call changes nothing.
struct CallSpec {
  std::string_view name;
  std::string_view summary;  // one line, for listings and Python's help()
  bool serving = false;      // acts on serving instances: needs the setup's "serving" object
  // Reads the arguments (problems go to the reader's errors) and returns the call.
  Action (*parse)(ScriptWorld& world, configs::ObjectReader& args) = nullptr;
};

// Every call, in name order.
const std::vector<CallSpec>& script_calls();
// The call named `name`; null when there is none.
const CallSpec* find_call(std::string_view name);

// The two halves of the table: the scheduling core's calls (seeds 001 and 002) and the
// serving instances' (seeds 003 and 004).
std::vector<CallSpec> core_calls();
std::vector<CallSpec> serving_calls();

}  // namespace meshsim::script
