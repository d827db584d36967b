#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace meshsim {

// The one table of names for an enum's values, used both ways (config and command-line
// parsing, output) and to list the accepted names in error messages, so the three never
// drift apart.
template <typename E, std::size_t N>
class EnumNames {
 public:
  constexpr explicit EnumNames(std::array<std::pair<E, std::string_view>, N> entries) : entries_(entries) {}

  const std::array<std::pair<E, std::string_view>, N>& entries() const { return entries_; }

  std::optional<E> parse(std::string_view name) const {
    for (const auto& [value, text] : entries_) {
      if (text == name) return value;
    }
    return std::nullopt;
  }
  std::string_view name(E value) const {
    for (const auto& [candidate, text] : entries_) {
      if (candidate == value) return text;
    }
    return "?";
  }
  // "'a', 'b', 'c'", for messages.
  std::string accepted() const {
    std::string out;
    for (const auto& entry : entries_) out += (out.empty() ? "'" : ", '") + std::string(entry.second) + "'";
    return out;
  }

 private:
  std::array<std::pair<E, std::string_view>, N> entries_;
};

}  // namespace meshsim
