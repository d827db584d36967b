// ObjectReader's integer fields read JSON built in code as they read parsed text.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "configs/object_reader.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

// Reads `value` into an unsigned field: the value, or nullopt when it is refused.
std::optional<std::uint64_t> read_count(const json& value) {
  const json object = {{"count", value}};
  ConfigErrors errors("test");
  ObjectReader reader(&object, "", errors);
  std::uint64_t out = 0;
  reader.read("count", out, "a count");
  if (!errors.empty()) return std::nullopt;
  return out;
}

TEST(ObjectReaderTest, UnsignedFieldsTakeEveryNonNegativeIntegerHoweverTheJsonWasMade) {
  EXPECT_EQ(read_count(json::parse("7")), 7u);   // parsed: an unsigned number
  EXPECT_EQ(read_count(json(7)), 7u);            // built from an int: a signed one
  EXPECT_EQ(read_count(json(std::int64_t{0})), 0u);
  EXPECT_EQ(read_count(json(std::uint64_t{1} << 63)), std::uint64_t{1} << 63);
  EXPECT_EQ(read_count(json(-1)), std::nullopt);
  EXPECT_EQ(read_count(json::parse("-1")), std::nullopt);
  EXPECT_EQ(read_count(json(1.5)), std::nullopt);
  EXPECT_EQ(read_count(json(true)), std::nullopt);
  EXPECT_EQ(read_count(json("7")), std::nullopt);
}

}  // namespace
}  // namespace meshsim::configs
