#include "tools/cli/scenario_args.hpp"

#include <cstdlib>

namespace meshsim::cli {

using configs::ObjectReader;
using nlohmann::json;
namespace sch = meshsim::scheduler;

std::variant<std::string, sch::PresetFromEnvironment> preset_argument(const std::string& text) {
  if (text.rfind("env:", 0) != 0) return text;
  sch::PresetFromEnvironment preset{text.substr(4), std::nullopt};
  if (const char* value = preset.variable.empty() ? nullptr : std::getenv(preset.variable.c_str())) preset.value = value;
  return preset;
}

sch::ResourceVector read_resources(ObjectReader& args, std::string_view key) {
  const json* node = args.raw(key);
  if (node == nullptr || node->is_null()) return {};
  if (!node->is_object()) {
    args.fail(key, "expected an object {\"cpu\", \"memory\", \"gpu\", \"custom\": {}}");
    return {};
  }
  ObjectReader r(node, args.path_of(key), args.errors());
  double cpu = 0, memory = 0, gpu = 0;
  const auto in_range = [](double v) { return v >= 0 && v <= sch::ResourceVector::kMaxAmount; };
  r.read("cpu", cpu, "a number in [0, 1e12]", in_range);
  r.read("memory", memory, "a number of MB in [0, 1e12]", in_range);
  r.read("gpu", gpu, "a number in [0, 1e12]", in_range);
  sch::ResourceVector out = sch::ResourceVector::of(cpu, memory, gpu);
  if (const json* custom = r.raw("custom"); custom != nullptr && !custom->is_null()) {
    if (!custom->is_object()) {
      r.fail("custom", "expected an object of resource name -> amount");
    } else {
      ObjectReader c(custom, r.path_of("custom"), r.errors());
      for (const auto& [name, value] : custom->items()) {
        double amount = 0;
        c.read(name, amount, "a number in [0, 1e12]", in_range);
        out.with_custom(name, amount);
      }
    }
  }
  return out;
}

sch::Labels read_labels(ObjectReader& args, std::string_view key) {
  sch::Labels labels;
  const json* node = args.raw(key);
  if (node == nullptr || node->is_null()) return labels;
  if (!node->is_object()) {
    args.fail(key, "expected an object of label -> string value");
    return labels;
  }
  ObjectReader r(node, args.path_of(key), args.errors());
  for (const auto& [name, value] : node->items()) {
    std::string text;
    r.read(name, text);
    labels[name] = text;
  }
  return labels;
}

std::vector<std::string> read_strings(ObjectReader& args, std::string_view key) {
  std::vector<std::string> out;
  const json* node = args.raw(key);
  if (node == nullptr || node->is_null()) return out;
  if (!node->is_array() || !std::all_of(node->begin(), node->end(), [](const json& v) { return v.is_string(); })) {
    args.fail(key, "expected an array of strings");
    return out;
  }
  for (const auto& v : *node) out.push_back(v.get<std::string>());
  return out;
}

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

sch::PolicyUpdate read_policy_update(ObjectReader& args) {
  sch::PolicyUpdate update;
  args.read_optional("same_pool_priority_threshold", update.same_pool_priority_threshold);
  args.read_optional("cross_pool_priority_threshold", update.cross_pool_priority_threshold);
  args.read_optional("remaining_time_weight", update.remaining_time_weight);
  args.read_optional("min_preempt_score", update.min_preempt_score);
  args.read_optional("enable_cross_pool_preemption", update.enable_cross_pool_preemption);
  if (args.has("protected_pools")) update.protected_pools = read_strings(args, "protected_pools");
  args.read_optional("label_priority_threshold", update.label_priority_threshold);
  args.read_optional("enable_label_preemption", update.enable_label_preemption);
  args.read_optional("label_max_priority_deficit", update.label_max_priority_deficit);
  args.read_optional("cancel_timeout", update.cancel_timeout);
  args.read_optional("min_runtime_before_preemption", update.min_runtime_before_preemption);
  args.read_optional("hold_timeout", update.hold_timeout);
  std::optional<std::string> preset;
  args.read_optional("preemption_aggressiveness", preset);
  if (preset) update.preemption_aggressiveness = preset_argument(*preset);
  if (const json* rules = args.raw("label_preemption_rules"); rules != nullptr && !rules->is_null()) {
    sch::LabelRules parsed;
    bool ok = rules->is_object();
    for (auto key = rules->begin(); ok && key != rules->end(); ++key) {
      ok = key->is_object();
      for (auto value = key->begin(); ok && value != key->end(); ++value) {
        ok = value->is_array() && std::all_of(value->begin(), value->end(), [](const json& v) { return v.is_string(); });
        if (ok) parsed[key.key()][value.key()] = value->get<std::vector<std::string>>();
      }
    }
    if (ok) {
      update.label_preemption_rules = std::move(parsed);
    } else {
      args.fail("label_preemption_rules", "expected {label key: {value: [values it may preempt]}}");
    }
  }
  return update;
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
  r.read("priority", state.priority);
  state.labels = read_labels(r, "labels");
  r.read("estimated_duration", state.estimated_duration);
  r.read("elapsed", state.elapsed);
  r.read("payload", state.payload);
  r.read_optional("custom", state.custom);
  return state;
}

json to_json(const sch::ResourceVector& resources) {
  json out = {{"cpu", resources.cpu()}, {"memory", resources.memory_mb()}, {"gpu", resources.gpu()}};
  json custom = json::object();
  for (const auto& [name, milli] : resources.custom_milli_all()) custom[name] = static_cast<double>(milli) / 1000.0;
  if (!custom.empty()) out["custom"] = custom;
  return out;
}

json to_json(const sch::SavedState& state) {
  json out = {{"task_id", state.task_id},   {"pool_name", state.pool_name}, {"agent_name", state.agent_name},
              {"priority", state.priority}, {"labels", state.labels},       {"estimated_duration", state.estimated_duration},
              {"elapsed", state.elapsed},   {"payload", state.payload}};
  if (state.custom) out["custom"] = *state.custom;
  return out;
}

json to_json(const sch::PreemptionPolicy& p) {
  json out = {{"same_pool_priority_threshold", p.same_pool_priority_threshold},
              {"cross_pool_priority_threshold", p.cross_pool_priority_threshold},
              {"remaining_time_weight", p.remaining_time_weight},
              {"min_preempt_score", p.min_preempt_score},
              {"enable_cross_pool_preemption", p.enable_cross_pool_preemption},
              {"protected_pools", p.protected_pools},
              {"label_preemption_rules", p.label_preemption_rules},
              {"label_priority_threshold", p.label_priority_threshold},
              {"enable_label_preemption", p.enable_label_preemption},
              {"label_max_priority_deficit", nullptr},
              {"cancel_timeout", p.cancel_timeout},
              {"min_runtime_before_preemption", p.min_runtime_before_preemption},
              {"hold_timeout", p.hold_timeout}};
  if (p.label_max_priority_deficit) out["label_max_priority_deficit"] = *p.label_max_priority_deficit;
  return out;
}

json to_json(const sch::PreemptionStats& s) {
  json recent = json::array();
  for (const auto& r : s.recent_preemptions) {
    recent.push_back({{"timestamp", r.timestamp},
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

}  // namespace meshsim::cli
