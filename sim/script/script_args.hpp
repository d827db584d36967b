#pragma once

// Reading a scenario script's arguments into the scheduling core's types, with the
// seeds' argument names, and writing the core's results back as JSON with the seeds'
// field names.

#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "configs/object_reader.hpp"
#include "configs/scheduler_args.hpp"
#include "scheduler/scheduler.hpp"

namespace meshsim::script {

using configs::preset_argument;
using configs::read_labels;
using configs::read_policy_update;
using configs::read_resources;
using configs::read_strings;
using configs::to_json;
std::optional<scheduler::PgPoolConfig> read_pg_pool_config(configs::ObjectReader& args, std::string_view key);
scheduler::SavedState read_saved_state(configs::ObjectReader& args, std::string_view key);
// A task's traits (priority, labels, estimated_duration, payload, checkpoint_interval),
// the same keys for every call that takes a task. `payload` is a string, or any JSON kept
// as its text.
void read_task_traits(configs::ObjectReader& args, scheduler::TaskTraits& traits, bool priority_required);
// A required string or number: reports "required" when absent.
std::string require_string(configs::ObjectReader& args, std::string_view key);
double require_number(configs::ObjectReader& args, std::string_view key);

nlohmann::json to_json(const scheduler::ResourceVector& resources);
nlohmann::json to_json(const scheduler::TaskTraits& traits);
nlohmann::json to_json(const scheduler::SavedState& state);
nlohmann::json to_json(const scheduler::PreemptionStats& stats);
nlohmann::json to_json(const scheduler::PgPoolStats& stats);
nlohmann::json to_json(const scheduler::SchedulerStats& stats);
nlohmann::json to_json(const scheduler::Agent& agent);
// {"success": true} or {"success": false, "error": ...}.
nlohmann::json to_json(const scheduler::OpResult& result);

}  // namespace meshsim::script
