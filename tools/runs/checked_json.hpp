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

// A value that does not fit the field it is read into. `node` is the value's place in the
// parsed tree (for a missing key, the object that lacks it), so the reader can name its key
// (json_path_of).
struct UnfitValue : std::runtime_error {
  UnfitValue(const void* at, const std::string& message) : std::runtime_error(message), node(at) {}
  const void* node;
};

// nlohmann::json converts numbers with a cast: -1 read into an unsigned field becomes
// 4294967295, 2.5 read into an integer becomes 2, and 1e999 reads as infinity. CheckedJson
// refuses all of these with UnfitValue, in every field and every container element, for
// files the project writes and reads back whole (the scheduler's state file). A value of
// the wrong type (a string where a number belongs, a number where a list belongs) is an
// UnfitValue too, at that value: nlohmann's own type error does not say where it was.
template <typename T, typename = void>
struct CheckedSerializer : nlohmann::adl_serializer<T> {
  template <typename Json>
  static void from_json(const Json& j, T& value) {
    try {
      nlohmann::adl_serializer<T>::from_json(j, value);
    } catch (const nlohmann::detail::type_error& e) {
      const std::string what = e.what();  // "[json.exception.type_error.302] type must be ..."
      throw UnfitValue(&j, what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
    }
  }
};

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
    throw UnfitValue(&j, "expected an integer in [" + std::to_string(Limits::min()) + ", " +
                              std::to_string(Limits::max()) + "], got " + j.dump());
  }
};

template <typename T>
struct CheckedSerializer<T, std::enable_if_t<std::is_floating_point_v<T>>> : nlohmann::adl_serializer<T> {
  template <typename Json>
  static void from_json(const Json& j, T& value) {
    if (!j.is_number()) throw UnfitValue(&j, "expected a number, got " + j.dump());
    nlohmann::adl_serializer<T>::from_json(j, value);
    if (!std::isfinite(value)) throw UnfitValue(&j, "expected a finite number, got " + j.dump());
  }
};

using CheckedJson = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t,
                                         double, std::allocator, CheckedSerializer>;

// `object`'s value at `key`, refusing (at `object`) what is not an object or lacks the key.
template <typename Json>
const Json& field(const Json& object, const char* key) {
  if (!object.is_object()) {
    throw UnfitValue(&object, std::string("expected an object with key '") + key + "', got " + object.dump());
  }
  const auto it = object.find(key);
  if (it == object.end()) throw UnfitValue(&object, std::string("missing key '") + key + "'");
  return *it;
}

// `object`'s list at `key`, refusing (at the value) what is not a list.
template <typename Json>
const Json& list_field(const Json& object, const char* key) {
  const Json& list = field(object, key);
  if (!list.is_array()) throw UnfitValue(&list, "expected a list, got " + list.dump());
  return list;
}

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
