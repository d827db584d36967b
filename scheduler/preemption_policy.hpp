#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "scheduler/op_result.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::scheduler {

// key -> {value -> values it may preempt}, e.g. tier: premium -> [standard, batch].
using LabelRules = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// Semantic presets for the label and same-pool thresholds (seed 001).
enum class PreemptionAggressiveness { kHigh, kMedium, kLow };
inline constexpr EnumNames kAggressivenessNames{
    std::array{std::pair{PreemptionAggressiveness::kHigh, std::string_view("HIGH")},
               std::pair{PreemptionAggressiveness::kMedium, std::string_view("MEDIUM")},
               std::pair{PreemptionAggressiveness::kLow, std::string_view("LOW")}}};

// The enum name in any case, or an alias: high|urgent|critical|prod, medium|default|normal,
// low|background|batch.
std::optional<PreemptionAggressiveness> parse_aggressiveness(std::string_view text);
// Every accepted spelling, for error messages.
std::string accepted_aggressiveness_names();

// Who may preempt whom, and how eagerly (seed 001's PreemptionPolicy plus the spec's storm
// guards). Priorities are the seeds' doubles; times are seconds.
struct PreemptionPolicy {
  double same_pool_priority_threshold = 1.0;
  double cross_pool_priority_threshold = 5.0;
  double remaining_time_weight = 0.1;  // kappa, score per second of remaining work
  double min_preempt_score = 0.5;
  bool enable_cross_pool_preemption = true;
  std::vector<std::string> protected_pools;
  LabelRules label_preemption_rules;
  double label_priority_threshold = 0.5;
  bool enable_label_preemption = true;
  // Unset: label dominance wins at any priority. Set: a label candidate whose priority
  // exceeds the incoming task's by more than this is refused.
  std::optional<double> label_max_priority_deficit;
  double cancel_timeout = 30.0;  // how long execute_preemption waits for the agent
  // Victims younger than this are not preempted (KAI's preemptMinRuntime).
  double min_runtime_before_preemption = 0.0;
  // How long capacity freed for a named preemptor stays held for it.
  double hold_timeout = 30.0;

  bool operator==(const PreemptionPolicy&) const = default;
  bool is_protected(const std::string& pool) const;
  // The rule for `key` lets `incoming_value` preempt `victim_value`.
  bool label_dominates(const std::string& key, const std::string& incoming_value,
                       const std::string& victim_value) const;
};

// A preset named by an environment variable, as the caller found it.
struct PresetFromEnvironment {
  std::string variable;
  std::optional<std::string> value;  // unset: the variable is not set
};

// update_preemption_policy's arguments: every field optional. The preset is applied
// first, so explicit thresholds given in the same update win over it.
struct PolicyUpdate {
  std::optional<double> same_pool_priority_threshold;
  std::optional<double> cross_pool_priority_threshold;
  std::optional<double> remaining_time_weight;
  std::optional<double> min_preempt_score;
  std::optional<bool> enable_cross_pool_preemption;
  std::optional<std::vector<std::string>> protected_pools;
  std::optional<LabelRules> label_preemption_rules;
  std::optional<double> label_priority_threshold;
  std::optional<bool> enable_label_preemption;
  std::optional<double> label_max_priority_deficit;
  std::optional<double> cancel_timeout;
  std::optional<double> min_runtime_before_preemption;
  std::optional<double> hold_timeout;
  // A name or an alias; or a preset named by an environment variable, which the caller
  // reads (scripts write "env:VARNAME"): the core never reads the process environment,
  // since many simulations with their own settings share one process.
  std::optional<std::variant<std::string, PresetFromEnvironment>> preemption_aggressiveness;
};

// Every field of PreemptionPolicy once, with its name in files and scripts and its twin
// in PolicyUpdate: as_update, update_policy, the config reader and writer (which the
// state file and scripts use too) and the state file's reader walk this list, so a new
// field is added here and to the two structs only. Calls visit(name, &PreemptionPolicy::field, &PolicyUpdate::field) in this order.
template <typename Visit>
void for_each_policy_field(Visit&& visit) {
  visit("same_pool_priority_threshold", &PreemptionPolicy::same_pool_priority_threshold,
        &PolicyUpdate::same_pool_priority_threshold);
  visit("cross_pool_priority_threshold", &PreemptionPolicy::cross_pool_priority_threshold,
        &PolicyUpdate::cross_pool_priority_threshold);
  visit("remaining_time_weight", &PreemptionPolicy::remaining_time_weight, &PolicyUpdate::remaining_time_weight);
  visit("min_preempt_score", &PreemptionPolicy::min_preempt_score, &PolicyUpdate::min_preempt_score);
  visit("enable_cross_pool_preemption", &PreemptionPolicy::enable_cross_pool_preemption,
        &PolicyUpdate::enable_cross_pool_preemption);
  visit("protected_pools", &PreemptionPolicy::protected_pools, &PolicyUpdate::protected_pools);
  visit("label_preemption_rules", &PreemptionPolicy::label_preemption_rules, &PolicyUpdate::label_preemption_rules);
  visit("label_priority_threshold", &PreemptionPolicy::label_priority_threshold,
        &PolicyUpdate::label_priority_threshold);
  visit("enable_label_preemption", &PreemptionPolicy::enable_label_preemption, &PolicyUpdate::enable_label_preemption);
  visit("label_max_priority_deficit", &PreemptionPolicy::label_max_priority_deficit,
        &PolicyUpdate::label_max_priority_deficit);
  visit("cancel_timeout", &PreemptionPolicy::cancel_timeout, &PolicyUpdate::cancel_timeout);
  visit("min_runtime_before_preemption", &PreemptionPolicy::min_runtime_before_preemption,
        &PolicyUpdate::min_runtime_before_preemption);
  visit("hold_timeout", &PreemptionPolicy::hold_timeout, &PolicyUpdate::hold_timeout);
}

struct PolicyUpdateResult {
  OpResult result;
  // E.g. an env: preset whose variable is missing: the preset is skipped, the rest applied.
  std::vector<std::string> warnings;
};

// Applies `update` to `policy` all or nothing: an invalid value (a negative threshold, an
// unknown preset, a cyclic label rule) leaves the policy unchanged and says why.
PolicyUpdateResult update_policy(PreemptionPolicy& policy, const PolicyUpdate& update);

// The update that sets every field to `policy`'s value (no preset): update_policy on it
// checks a whole policy, e.g. one read from a state file.
PolicyUpdate as_update(const PreemptionPolicy& policy);

// A cycle in the label rules ("tier: a -> b -> a"), or nullopt when they are acyclic.
std::optional<std::string> find_label_rule_cycle(const LabelRules& rules);

}  // namespace meshsim::scheduler
