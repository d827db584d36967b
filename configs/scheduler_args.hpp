#pragma once

// Reading the scheduling core's types from config objects and scenario-script arguments,
// with the seeds' argument names.

#include <string>
#include <variant>
#include <vector>

#include "configs/object_reader.hpp"
#include "scheduler/cluster_state.hpp"
#include "scheduler/preemption_policy.hpp"
#include "scheduler/resources.hpp"

namespace meshsim::configs {

// {"cpu", "memory", "gpu", "custom": {name: amount}}; absent keys are 0.
scheduler::ResourceVector read_resources(ObjectReader& args, std::string_view key);
// A preset argument: "env:VARNAME" is read from this process's environment here, at the
// edge (the core never reads it); any other text is a preset name.
std::variant<std::string, scheduler::PresetFromEnvironment> preset_argument(const std::string& text);
scheduler::Labels read_labels(ObjectReader& args, std::string_view key);
std::vector<std::string> read_strings(ObjectReader& args, std::string_view key);
// update_preemption_policy's arguments (every field optional; the preset by name, alias
// or "env:VARNAME").
scheduler::PolicyUpdate read_policy_update(ObjectReader& args);
// Every field of `policy`, under read_policy_update's names (reads back to the same policy).
nlohmann::json to_json(const scheduler::PreemptionPolicy& policy);

}  // namespace meshsim::configs
