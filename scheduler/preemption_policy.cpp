#include "scheduler/preemption_policy.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <type_traits>

namespace meshsim::scheduler {
namespace {

struct Preset {
  double label_threshold;
  double same_pool_threshold;
};

Preset preset_of(PreemptionAggressiveness level) {
  switch (level) {
    case PreemptionAggressiveness::kHigh:
      return {0.1, 0.5};
    case PreemptionAggressiveness::kMedium:
      return {0.5, 1.0};
    case PreemptionAggressiveness::kLow:
      return {1.0, 3.0};
  }
  return {0.5, 1.0};
}

struct Alias {
  std::string_view name;
  PreemptionAggressiveness level;
};
constexpr Alias kAliases[] = {
    {"high", PreemptionAggressiveness::kHigh},         {"urgent", PreemptionAggressiveness::kHigh},
    {"critical", PreemptionAggressiveness::kHigh},     {"prod", PreemptionAggressiveness::kHigh},
    {"medium", PreemptionAggressiveness::kMedium},     {"default", PreemptionAggressiveness::kMedium},
    {"normal", PreemptionAggressiveness::kMedium},     {"low", PreemptionAggressiveness::kLow},
    {"background", PreemptionAggressiveness::kLow},    {"batch", PreemptionAggressiveness::kLow},
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

std::optional<PreemptionAggressiveness> parse_aggressiveness(std::string_view text) {
  const std::string key = lower(text);
  for (const auto& alias : kAliases) {
    if (alias.name == key) return alias.level;
  }
  return std::nullopt;
}

std::string accepted_aggressiveness_names() {
  std::string out = kAggressivenessNames.accepted() + " in any case, or an alias (";
  for (std::size_t i = 0; i < std::size(kAliases); ++i) out += (i ? ", '" : "'") + std::string(kAliases[i].name) + "'";
  return out + "), or 'env:VARNAME'";
}

bool PreemptionPolicy::is_protected(const std::string& pool) const {
  return std::find(protected_pools.begin(), protected_pools.end(), pool) != protected_pools.end();
}

bool PreemptionPolicy::label_dominates(const std::string& key, const std::string& incoming_value,
                                       const std::string& victim_value) const {
  const auto rule = label_preemption_rules.find(key);
  if (rule == label_preemption_rules.end()) return false;
  const auto targets = rule->second.find(incoming_value);
  if (targets == rule->second.end()) return false;
  return std::find(targets->second.begin(), targets->second.end(), victim_value) != targets->second.end();
}

std::optional<std::string> find_label_rule_cycle(const LabelRules& rules) {
  // Depth-first search with an explicit stack (rules come from input files: a long chain
  // must not exhaust the call stack), keeping the path so a cycle can be named in full.
  // Each value is visited once: O(values + edges) per key.
  static const std::vector<std::string> kNoTargets;
  for (const auto& rule : rules) {
    // Named, not structured bindings: the lambda below captures them (clang 14 cannot).
    const std::string& key = rule.first;
    const auto& edges = rule.second;
    struct Frame {
      const std::string* value;
      const std::vector<std::string>* targets;
      std::size_t next = 0;
    };
    std::map<std::string_view, std::size_t> on_path;  // value -> its index in `path`
    std::set<std::string_view> done;
    std::vector<Frame> path;
    const auto enter = [&](const std::string& value) {
      const auto out = edges.find(value);
      on_path.emplace(value, path.size());
      path.push_back(Frame{&value, out != edges.end() ? &out->second : &kNoTargets});
    };
    for (const auto& start : edges) {
      if (done.count(start.first) != 0) continue;
      enter(start.first);
      while (!path.empty()) {
        Frame& top = path.back();
        if (top.next == top.targets->size()) {
          on_path.erase(*top.value);
          done.insert(*top.value);
          path.pop_back();
          continue;
        }
        const std::string& value = (*top.targets)[top.next++];
        if (const auto loop = on_path.find(value); loop != on_path.end()) {
          std::string cycle = key + ": ";
          for (std::size_t i = loop->second; i < path.size(); ++i) cycle += *path[i].value + " -> ";
          return cycle + value;
        }
        if (done.count(value) == 0) enter(value);
      }
    }
  }
  return std::nullopt;
}

PolicyUpdate as_update(const PreemptionPolicy& p) {
  PolicyUpdate u;
  for_each_policy_field([&](const char*, auto field, auto update_field) { u.*update_field = p.*field; });
  return u;
}

PolicyUpdateResult update_policy(PreemptionPolicy& policy, const PolicyUpdate& update) {
  PolicyUpdateResult out;
  PreemptionPolicy next = policy;
  auto fail = [&](std::string message) {
    out.result = OpResult::fail("update_preemption_policy: " + std::move(message));
    return out;
  };

  if (update.preemption_aggressiveness) {
    std::optional<PreemptionAggressiveness> level;
    if (const auto* from_environment = std::get_if<PresetFromEnvironment>(&*update.preemption_aggressiveness)) {
      const std::string& variable = from_environment->variable;
      const auto& value = from_environment->value;
      if (!value) {
        out.warnings.push_back("preemption_aggressiveness: environment variable '" + variable +
                               "' is not set; thresholds left unchanged");
      } else if (!(level = parse_aggressiveness(*value))) {
        out.warnings.push_back("preemption_aggressiveness: environment variable '" + variable + "' is '" + *value +
                               "', expected " + accepted_aggressiveness_names() + "; thresholds left unchanged");
      }
    } else if (const auto& text = std::get<std::string>(*update.preemption_aggressiveness);
               !(level = parse_aggressiveness(text))) {
      if (text.rfind("env:", 0) == 0) {
        return fail("preemption_aggressiveness '" + text +
                    "': the caller reads the environment and passes a PresetFromEnvironment");
      }
      return fail("preemption_aggressiveness '" + text + "' is not one of " + accepted_aggressiveness_names());
    }
    if (level) {
      const Preset preset = preset_of(*level);
      next.label_priority_threshold = preset.label_threshold;
      next.same_pool_priority_threshold = preset.same_pool_threshold;
    }
  }

  // Each field given: checked, then set (numbers finite and >= 0, label rules acyclic).
  std::optional<std::string> refused;
  for_each_policy_field([&](const char* name, auto field, auto update_field) {
    const auto& value = update.*update_field;
    if (!value || refused) return;
    using Value = std::remove_cvref_t<decltype(*value)>;
    if constexpr (std::is_same_v<Value, double>) {
      if (!std::isfinite(*value) || *value < 0) {
        refused = std::string(name) + " must be a finite number >= 0, got " + std::to_string(*value);
        return;
      }
    } else if constexpr (std::is_same_v<Value, LabelRules>) {
      if (auto cycle = find_label_rule_cycle(*value)) {
        refused = std::string(name) + " must not form a cycle (it would let tasks preempt each other in a loop): " +
                  *cycle;
        return;
      }
    }
    next.*field = *value;
  });
  if (refused) return fail(*refused);
  policy = std::move(next);
  return out;
}

}  // namespace meshsim::scheduler
