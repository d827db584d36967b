// Hydra-style overrides (configs/overrides.hpp): what a value means, where it lands, and
// errors that name the override and the key.
#include "configs/overrides.hpp"

#include <gtest/gtest.h>

namespace meshsim::configs {
namespace {

using nlohmann::json;

TEST(OverridesTest, ValuesAreJsonWhenTheyParseElseBareStrings) {
  EXPECT_EQ(parse_override("seed=7")->value, json(7));
  EXPECT_EQ(parse_override("a.b=0.5")->value, json(0.5));
  EXPECT_EQ(parse_override("flag=true")->value, json(true));
  EXPECT_EQ(parse_override("list=[1, 2]")->value, json::array({1, 2}));
  EXPECT_EQ(parse_override("autoscaler.policy=oracle")->value, json("oracle"));
  EXPECT_EQ(parse_override("name=\"7\"")->value, json("7"));
  EXPECT_EQ(parse_override("name=")->value, json(""));
  EXPECT_EQ(parse_override("a.b=x=y")->path, "a.b");
  EXPECT_FALSE(parse_override("no-equals-sign"));
  EXPECT_FALSE(parse_override("=3"));
}

TEST(OverridesTest, PathsCreateObjectKeysAndIndexLists) {
  json tree = {{"serving", {{"start_state", json::array({{{"tag", "mixed"}, {"count", 4}}})}}}};
  ASSERT_TRUE(apply_override(tree, *parse_override("serving.start_state.0.count=2")));
  ASSERT_TRUE(apply_override(tree, *parse_override("scaling.scale_up_delay_s=60")));
  EXPECT_EQ(tree["serving"]["start_state"][0]["count"], 2);
  EXPECT_EQ(tree["scaling"]["scale_up_delay_s"], 60);
  const auto past_end = apply_override(tree, *parse_override("serving.start_state.3.count=1"));
  ASSERT_FALSE(past_end);
  EXPECT_EQ(past_end.error().message,
            "override serving.start_state.3.count: serving.start_state.3 is not an element of a list of 1");
  const auto inside_number = apply_override(tree, *parse_override("scaling.scale_up_delay_s.x=1"));
  ASSERT_FALSE(inside_number);
  EXPECT_NE(inside_number.error().message.find("goes inside a number"), std::string::npos);
  EXPECT_FALSE(apply_override(tree, *parse_override("a..b=1")));
}

TEST(OverridesTest, TheScenarioIsValidatedWithItsOverridesNamingTheKey) {
  const auto config = load_scenario_with("", {*parse_override("seed=9"), *parse_override("scaling.scale_up_delay_s=60")});
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->seed, 9u);
  EXPECT_EQ(config->scaling.manager.scale_up_delay, SimTime::from_seconds(60));
  const auto bad = load_scenario_with("", {*parse_override("scaling.scale_up_delay_s=-1")});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("scaling.scale_up_delay_s"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace meshsim::configs
