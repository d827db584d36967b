#include "configs/scheduler_args.hpp"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

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

namespace {

// {label key: {value: [values it may preempt]}}; nullopt when absent (or wrong, reported).
std::optional<sch::LabelRules> read_label_rules(ObjectReader& args, const char* name) {
  const json* rules = args.raw(name);
  if (rules == nullptr || rules->is_null()) return std::nullopt;
  sch::LabelRules parsed;
  bool ok = rules->is_object();
  for (auto key = rules->begin(); ok && key != rules->end(); ++key) {
    ok = key->is_object();
    for (auto value = key->begin(); ok && value != key->end(); ++value) {
      ok = value->is_array() && std::all_of(value->begin(), value->end(), [](const json& v) { return v.is_string(); });
      if (ok) parsed[key.key()][value.key()] = value->get<std::vector<std::string>>();
    }
  }
  if (ok) return parsed;
  args.fail(name, "expected {label key: {value: [values it may preempt]}}");
  return std::nullopt;
}

}  // namespace

sch::PolicyUpdate read_policy_update(ObjectReader& args) {
  sch::PolicyUpdate update;
  sch::for_each_policy_field([&](const char* name, auto, auto update_field) {
    auto& value = update.*update_field;
    using Value = std::remove_cvref_t<decltype(*value)>;
    if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
      if (args.has(name)) value = read_strings(args, name);
    } else if constexpr (std::is_same_v<Value, sch::LabelRules>) {
      value = read_label_rules(args, name);
    } else {
      args.read_optional(name, value);
    }
  });
  std::optional<std::string> preset;
  args.read_optional("preemption_aggressiveness", preset);
  if (preset) update.preemption_aggressiveness = preset_argument(*preset);
  return update;
}

json to_json(const sch::PreemptionPolicy& p) {
  json out = json::object();
  sch::for_each_policy_field([&](const char* name, auto field, auto) {
    const auto& value = p.*field;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(value)>, std::optional<double>>) {
      out[name] = value ? json(*value) : json(nullptr);
    } else {
      out[name] = value;
    }
  });
  return out;
}

}  // namespace meshsim::configs
