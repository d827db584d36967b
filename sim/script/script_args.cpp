#include "sim/script/script_args.hpp"

#include <cstdlib>

namespace meshsim::script {

using configs::ObjectReader;
using nlohmann::json;
namespace sch = meshsim::scheduler;



std::string require_string(ObjectReader& args, std::string_view key) {
  std::string out;
  if (!args.has(key)) {
    args.fail(key, "required (a string)");
    return out;
  }
  args.read(key, out);
  return out;
}

double require_number(ObjectReader& args, std::string_view key) {
  double out = 0;
  if (!args.has(key)) {
    args.fail(key, "required (a number)");
    return out;
  }
  args.read(key, out);
  return out;
}

std::optional<sch::PgPoolConfig> read_pg_pool_config(ObjectReader& args, std::string_view key) {
  const json* node = args.raw(key);
  if (node == nullptr || node->is_null()) return std::nullopt;
  if (!node->is_object()) {
    args.fail(key, "expected an object");
    return std::nullopt;
  }
  ObjectReader r(node, args.path_of(key), args.errors());
  sch::PgPoolConfig config;
  r.read("enable", config.enable);
  r.read("enable_dynamic_pgs", config.enable_dynamic_pgs);
  r.read("max_dynamic_pgs", config.max_dynamic_pgs);
  r.read("enable_pg_reuse", config.enable_pg_reuse);
  r.read("high_priority_threshold", config.high_priority_threshold);
  if (const json* specs = r.raw("high_priority_pg_specs"); specs != nullptr && !specs->is_null()) {
    if (!specs->is_array()) {
      r.fail("high_priority_pg_specs", "expected an array of resource objects");
    } else {
      for (std::size_t i = 0; i < specs->size(); ++i) {
        const json one = {{"spec", (*specs)[i]}};
        ObjectReader item(&one, r.path_of("high_priority_pg_specs") + "[" + std::to_string(i) + "]", r.errors());
        auto spec = read_resources(item, "spec");
        config.high_priority_pg_specs.push_back(spec);
      }
    }
  }
  return config;
}

sch::SavedState read_saved_state(ObjectReader& args, std::string_view key) {
  sch::SavedState state;
  const json* node = args.raw(key);
  if (node == nullptr || !node->is_object()) {
    args.fail(key, "required (the saved_state object execute_preemption printed)");
    return state;
  }
  ObjectReader r(node, args.path_of(key), args.errors());
  state.task_id = require_string(r, "task_id");
  r.read("pool_name", state.pool_name);
  r.read("agent_name", state.agent_name);
  read_task_traits(r, state, /*priority_required=*/false);
  r.read("elapsed", state.elapsed);
  r.read_optional("custom", state.custom);
  return state;
}

void read_task_traits(ObjectReader& args, sch::TaskTraits& traits, bool priority_required) {
  if (priority_required) {
    traits.priority = require_number(args, "priority");
  } else {
    args.read("priority", traits.priority);
  }
  traits.labels = read_labels(args, "labels");
  args.read("estimated_duration", traits.estimated_duration, "seconds >= 0", configs::kNonNegative);
  if (const json* payload = args.raw("payload"); payload != nullptr && !payload->is_null()) {
    traits.payload = payload->is_string() ? payload->get<std::string>() : payload->dump();
  }
  args.read("checkpoint_interval", traits.checkpoint_interval, "seconds >= 0", configs::kNonNegative);
}

json to_json(const sch::ResourceVector& resources) {
  json out = {{"cpu", resources.cpu()}, {"memory", resources.memory_mb()}, {"gpu", resources.gpu()}};
  json custom = json::object();
  for (const auto& [name, milli] : resources.custom_milli_all()) custom[name] = static_cast<double>(milli) / 1000.0;
  if (!custom.empty()) out["custom"] = custom;
  return out;
}

json to_json(const sch::TaskTraits& traits) {
  return {{"priority", traits.priority},
          {"labels", traits.labels},
          {"estimated_duration", traits.estimated_duration},
          {"payload", traits.payload},
          {"checkpoint_interval", traits.checkpoint_interval}};
}

json to_json(const sch::SavedState& state) {
  json out = to_json(static_cast<const sch::TaskTraits&>(state));
  out["task_id"] = state.task_id;
  out["pool_name"] = state.pool_name;
  out["agent_name"] = state.agent_name;
  out["elapsed"] = state.elapsed;
  if (state.custom) out["custom"] = *state.custom;
  return out;
}

json to_json(const sch::PreemptionStats& s) {
  json recent = json::array();
  for (const auto& r : s.recent_preemptions) {
    recent.push_back({{"timestamp", r.timestamp.seconds()},
                      {"task_id", r.task_id},
                      {"pool_name", r.pool_name},
                      {"priority", r.priority},
                      {"reason", r.reason},
                      {"lost_work", r.lost_work},
                      {"preemptor", r.preemptor}});
  }
  return {{"total_preemptions", s.total_preemptions},
          {"same_pool_preemptions", s.same_pool_preemptions},
          {"cross_pool_preemptions", s.cross_pool_preemptions},
          {"label_preemptions", s.label_preemptions},
          {"manual_preemptions", s.manual_preemptions},
          {"running_tasks", s.running_tasks},
          {"restored_tasks", s.restored_tasks},
          {"requeued_tasks", s.requeued_tasks},
          {"lost_tasks", s.lost_tasks},
          {"completed_tasks", s.completed_tasks},
          {"lost_work", s.lost_work},
          {"recent_preemptions", recent}};
}

json to_json(const sch::PgPoolStats& s) {
  return {{"reserved_total", s.reserved_total},   {"reserved_in_use", s.reserved_in_use},
          {"dynamic_created", s.dynamic_created}, {"dynamic_in_use", s.dynamic_in_use},
          {"dynamic_idle", s.dynamic_idle},       {"dynamic_destroyed", s.dynamic_destroyed},
          {"reuse_hits", s.reuse_hits}};
}

json to_json(const sch::SchedulerStats& s) {
  json pools = json::object();
  for (const auto& [name, p] : s.pools) {
    pools[name] = {{"capacity", to_json(p.capacity)},
                   {"used", to_json(p.used)},
                   {"available", to_json(p.available)},
                   {"agents", p.agents},
                   {"running_tasks", p.running_tasks}};
  }
  return {{"pools", pools},
          {"nodes", {{"count", s.nodes}, {"capacity", to_json(s.node_capacity)}, {"used", to_json(s.node_used)}}},
          {"placement_groups", s.placement_groups},
          {"tasks", s.tasks}};
}

json to_json(const sch::Agent& agent) {
  json out = {{"name", agent.spec.name},
              {"pool", agent.spec.pool},
              {"actor_class", agent.spec.kind},
              {"resources", to_json(agent.spec.resources)},
              {"placement_group", agent.placement_group},
              {"task", nullptr}};
  if (agent.task) out["task"] = *agent.task;
  if (!agent.held_for.empty()) out["held_for"] = agent.held_for;
  return out;
}

json to_json(const sch::OpResult& result) {
  json out = {{"success", result.success}};
  if (!result.success) out["error"] = result.error;
  return out;
}

}  // namespace meshsim::script
