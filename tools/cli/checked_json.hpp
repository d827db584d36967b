#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace meshsim::cli {

// A number that does not fit the field it is read into. `node` is the value's place in the
// parsed tree, so the reader can name its key (json_path_of).
struct UnfitNumber : std::runtime_error {
  UnfitNumber(const void* at, const std::string& message) : std::runtime_error(message), node(at) {}
  const void* node;
};

// nlohmann::json converts numbers with a cast: -1 read into an unsigned field becomes
// 4294967295, 2.5 read into an integer becomes 2, and 1e999 reads as infinity. CheckedJson
// refuses all of these with UnfitNumber, in every field and every container element, for
// files the project writes and reads back whole (the scheduler's state file).
template <typename T, typename = void>
struct CheckedSerializer : nlohmann::adl_serializer<T> {};

template <typename T>
struct CheckedSerializer<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
    : nlohmann::adl_serializer<T> {
  template <typename Json>
  static void from_json(const Json& j, T& value) {
    using Limits = std::numeric_limits<T>;
    // get_ptr reads the stored number as it is (get<> would come back here). Unsigned
    // first: nlohmann counts an unsigned number as an integer too, and its signed
    // pointer would read 2^64 - 1 as -1.
    if (j.is_number_unsigned()) {
      const auto u = *j.template get_ptr<const typename Json::number_unsigned_t*>();
      if (std::cmp_less_equal(u, Limits::max())) {
        value = static_cast<T>(u);
        return;
      }
    } else if (j.is_number_integer()) {
      const auto i = *j.template get_ptr<const typename Json::number_integer_t*>();
      if (std::in_range<T>(i)) {
        value = static_cast<T>(i);
        return;
      }
    }
    throw UnfitNumber(&j, "expected an integer in [" + std::to_string(Limits::min()) + ", " +
                              std::to_string(Limits::max()) + "], got " + j.dump());
  }
};

template <typename T>
struct CheckedSerializer<T, std::enable_if_t<std::is_floating_point_v<T>>> : nlohmann::adl_serializer<T> {
  template <typename Json>
  static void from_json(const Json& j, T& value) {
    nlohmann::adl_serializer<T>::from_json(j, value);
    if (!std::isfinite(value)) throw UnfitNumber(&j, "expected a finite number, got " + j.dump());
  }
};

using CheckedJson = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t,
                                         double, std::allocator, CheckedSerializer>;

// Where `node` sits under `root`, as "stats.lost_tasks" or "tasks[3].seq" ("" for the
// root itself); none when it is not in the tree. Walks the whole tree: for error messages.
template <typename Json>
std::optional<std::string> json_path_of(const Json& root, const void* node) {
  if (&root == node) return "";
  const auto under = [&](const Json& child, const std::string& step) -> std::optional<std::string> {
    auto rest = json_path_of(child, node);
    if (!rest) return std::nullopt;
    return step + (rest->empty() || rest->front() == '[' ? "" : ".") + *rest;
  };
  if (root.is_object()) {
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (auto path = under(*it, it.key())) return path;
    }
  } else if (root.is_array()) {
    for (std::size_t i = 0; i < root.size(); ++i) {
      if (auto path = under(root[i], "[" + std::to_string(i) + "]")) return path;
    }
  }
  return std::nullopt;
}

}  // namespace meshsim::cli
