#include "configs/scheduler_args.hpp"

#include <algorithm>
#include <cstdlib>

namespace meshsim::configs {

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

}  // namespace meshsim::configs
