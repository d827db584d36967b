// parse_json_text's nesting bound, counted on the text before parsing (json_nesting),
// against the depth of the tree the parser builds, on random documents whose strings hold
// brackets, quotes and escapes.
#include "traces/json_text.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace meshsim::traces {
namespace {

int tree_depth(const nlohmann::json& value) {
  if (!value.is_structured()) return 0;
  int deepest = 0;
  for (const auto& item : value) deepest = std::max(deepest, tree_depth(item));
  return deepest + 1;
}

// A random document exactly `depth` levels deep along one chain of containers, with
// shallow siblings and strings of brackets, quotes and escapes.
nlohmann::json random_value(std::mt19937_64& rng, int depth, bool chain = true) {
  const auto pick = [&](std::uint64_t n) { return rng() % n; };
  if (depth == 0 || (!chain && pick(4) == 0)) {
    static const char* kStrings[] = {"[", "]{", "}\"", "\\", "a\\\"[", "\\u005b", "plain", ""};
    return pick(3) == 0 ? nlohmann::json(pick(100)) : nlohmann::json(kStrings[pick(8)]);
  }
  nlohmann::json container = pick(2) == 0 ? nlohmann::json::array() : nlohmann::json::object();
  for (std::uint64_t i = (chain ? 1 : 0) + pick(3); i > 0; --i) {
    nlohmann::json item = i == 1 && chain ? random_value(rng, depth - 1) : random_value(rng, std::min(depth - 1, 2), false);
    if (container.is_array()) {
      container.push_back(std::move(item));
    } else {
      container["k[" + std::to_string(i) + "\"{"] = std::move(item);
    }
  }
  return container;
}

TEST(JsonTextTest, TheNestingCountedOnTheTextIsTheTreesDepth) {
  std::mt19937_64 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const nlohmann::json value = random_value(rng, static_cast<int>(rng() % 80));
    const std::string text = value.dump(trial % 2 == 0 ? -1 : 1);
    const int depth = tree_depth(value);
    EXPECT_EQ(json_nesting(text, 1000), depth) << text;
    if (depth <= kMaxJsonNesting) {
      EXPECT_EQ(parse_json_text(text), value);
    } else {
      EXPECT_THROW(parse_json_text(text), JsonTooDeep);
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_LT(refused, 1900);
}

TEST(JsonTextTest, ALongListParsesInLinearTime) {
  // 200,000 objects in one list: the callback parser used before rescanned the list at each
  // object's end (minutes); this is milliseconds. Not timed here: a wrong bound would
  // show as a test timeout, and the benchmark (growth_bench) measures the doubling.
  std::string text = "[";
  for (int i = 0; i < 200'000; ++i) text += (i > 0 ? ",{\"a\":" : "{\"a\":") + std::to_string(i) + "}";
  text += "]";
  EXPECT_EQ(parse_json_text(text).size(), 200'000u);
}

}  // namespace
}  // namespace meshsim::traces
