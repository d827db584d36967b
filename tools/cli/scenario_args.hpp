#pragma once

// Reading a scenario script's arguments into the scheduling core's types, with the
// seeds' argument names, and writing the core's results back as JSON with the seeds'
// field names.

#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "configs/object_reader.hpp"
#include "scheduler/scheduler.hpp"

namespace meshsim::cli {

// {"cpu", "memory", "gpu", "custom": {name: amount}}; absent keys are 0.
scheduler::ResourceVector read_resources(configs::ObjectReader& args, std::string_view key);
// A preset argument: "env:VARNAME" is read from this process's environment here, at the
// edge (the core never reads it); any other text is a preset name.
std::variant<std::string, scheduler::PresetFromEnvironment> preset_argument(const std::string& text);
scheduler::Labels read_labels(configs::ObjectReader& args, std::string_view key);
std::vector<std::string> read_strings(configs::ObjectReader& args, std::string_view key);
std::optional<scheduler::PgPoolConfig> read_pg_pool_config(configs::ObjectReader& args, std::string_view key);
scheduler::PolicyUpdate read_policy_update(configs::ObjectReader& args);
scheduler::SavedState read_saved_state(configs::ObjectReader& args, std::string_view key);
// A required string or number: reports "required" when absent.
std::string require_string(configs::ObjectReader& args, std::string_view key);
double require_number(configs::ObjectReader& args, std::string_view key);

nlohmann::json to_json(const scheduler::ResourceVector& resources);
nlohmann::json to_json(const scheduler::SavedState& state);
nlohmann::json to_json(const scheduler::PreemptionPolicy& policy);
nlohmann::json to_json(const scheduler::PreemptionStats& stats);
nlohmann::json to_json(const scheduler::PgPoolStats& stats);
nlohmann::json to_json(const scheduler::SchedulerStats& stats);
nlohmann::json to_json(const scheduler::Agent& agent);
// {"success": true} or {"success": false, "error": ...}.
nlohmann::json to_json(const scheduler::OpResult& result);

}  // namespace meshsim::cli
