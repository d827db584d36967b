#include "scheduler/preemption_policy.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace meshsim::scheduler {
namespace {

PolicyUpdateResult set_level(PreemptionPolicy& policy, const std::string& level) {
  PolicyUpdate update;
  update.preemption_aggressiveness = level;
  return update_policy(policy, update);
}

// P10: the presets, their aliases in any case, and env:VARNAME.
TEST(PreemptionPolicyTest, P10PresetsAcceptNamesAliasesAndAnyCase) {
  for (const std::string level : {"HIGH", "urgent", "CRITICAL", "prod", "High"}) {
    PreemptionPolicy policy;
    ASSERT_TRUE(set_level(policy, level).result.success) << level;
    EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 0.1) << level;
    EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 0.5) << level;
  }
  PreemptionPolicy policy;
  ASSERT_TRUE(set_level(policy, "background").result.success);
  EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 1.0);
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 3.0);
  ASSERT_TRUE(set_level(policy, "default").result.success);
  EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 0.5);
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 1.0);
}

PolicyUpdateResult set_from_environment(PreemptionPolicy& policy, std::optional<std::string> value) {
  PolicyUpdate update;
  update.preemption_aggressiveness = PresetFromEnvironment{"SCHEDULEMESH_PREEMPTION_LEVEL", std::move(value)};
  return update_policy(policy, update);
}

// The caller reads the variable (sim/script/script_args: preset_argument); the core
// takes what it found.
TEST(PreemptionPolicyTest, P10APresetFromTheEnvironmentSelectsThePreset) {
  PreemptionPolicy policy;
  auto result = set_from_environment(policy, "high");
  ASSERT_TRUE(result.result.success);
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 0.1);
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 0.5);

  // Invalid or unset: a warning, and the thresholds stay as they were.
  result = set_from_environment(policy, "bogus");
  ASSERT_TRUE(result.result.success);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("is 'bogus', expected"), std::string::npos) << result.warnings[0];
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 0.5);
  result = set_from_environment(policy, std::nullopt);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("is not set"), std::string::npos);
  EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 0.1);
}

// Many simulations share a process: the core never reads its environment (issue 9).
TEST(PreemptionPolicyTest, TheCoreDoesNotReadTheProcessEnvironment) {
  ::setenv("SCHEDULEMESH_PREEMPTION_LEVEL", "high", 1);
  PreemptionPolicy policy;
  const auto result = set_level(policy, "env:SCHEDULEMESH_PREEMPTION_LEVEL");
  ::unsetenv("SCHEDULEMESH_PREEMPTION_LEVEL");
  EXPECT_FALSE(result.result.success);
  EXPECT_NE(result.result.error.find("the caller reads the environment"), std::string::npos) << result.result.error;
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, PreemptionPolicy{}.same_pool_priority_threshold);
}

TEST(PreemptionPolicyTest, P10ADirectUnknownPresetIsAnErrorListingTheAcceptedValues) {
  PreemptionPolicy policy;
  const auto result = set_level(policy, "bogus");
  EXPECT_FALSE(result.result.success);
  EXPECT_NE(result.result.error.find("'bogus' is not one of 'HIGH', 'MEDIUM', 'LOW'"), std::string::npos)
      << result.result.error;
  EXPECT_NE(result.result.error.find("'urgent'"), std::string::npos);
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 1.0);
}

TEST(PreemptionPolicyTest, ExplicitThresholdsInTheSameUpdateWinOverThePreset) {
  PreemptionPolicy policy;
  PolicyUpdate update;
  update.preemption_aggressiveness = "low";
  update.same_pool_priority_threshold = 2.0;
  ASSERT_TRUE(update_policy(policy, update).result.success);
  EXPECT_DOUBLE_EQ(policy.same_pool_priority_threshold, 2.0);
  EXPECT_DOUBLE_EQ(policy.label_priority_threshold, 1.0);
}

// Issue 8: a 100,000-long chain of rules overflowed the stack of a recursive search.
TEST(PreemptionPolicyTest, LongChainsOfLabelRulesAreCheckedWithoutRecursion) {
  LabelRules rules;
  auto& chain = rules["tier"];
  constexpr int kLength = 100'000;
  for (int i = 0; i < kLength; ++i) chain["v" + std::to_string(i)] = {"v" + std::to_string(i + 1)};
  EXPECT_EQ(find_label_rule_cycle(rules), std::nullopt);
  chain["v" + std::to_string(kLength)] = {"v99998"};
  EXPECT_EQ(find_label_rule_cycle(rules),
            "tier: v99998 -> v99999 -> v" + std::to_string(kLength) + " -> v99998");
}

TEST(PreemptionPolicyTest, CyclicLabelRulesAreRejectedNamingTheCycle) {
  PreemptionPolicy policy;
  PolicyUpdate update;
  update.label_preemption_rules = LabelRules{{"tier", {{"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}}}};
  update.cross_pool_priority_threshold = 7.0;
  const auto result = update_policy(policy, update);
  EXPECT_FALSE(result.result.success);
  EXPECT_NE(result.result.error.find("tier: a -> b -> c -> a"), std::string::npos) << result.result.error;
  EXPECT_TRUE(policy.label_preemption_rules.empty());  // all or nothing
  EXPECT_DOUBLE_EQ(policy.cross_pool_priority_threshold, 5.0);
  EXPECT_EQ(find_label_rule_cycle({{"k", {{"x", {"x"}}}}}), "k: x -> x");
  EXPECT_EQ(find_label_rule_cycle({{"tier", {{"premium", {"standard", "batch"}}, {"standard", {"batch"}}}}}),
            std::nullopt);
}

TEST(PreemptionPolicyTest, NegativeThresholdsAreRejectedByName) {
  PreemptionPolicy policy;
  PolicyUpdate update;
  update.cancel_timeout = -1.0;
  const auto result = update_policy(policy, update);
  EXPECT_FALSE(result.result.success);
  EXPECT_NE(result.result.error.find("cancel_timeout must be a finite number >= 0"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::scheduler
