#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::configs {

// No number in a config means more than this (a model of 1e15 parameters, 1e15 seconds):
// larger ones are refused before they can overflow a conversion.
inline constexpr double kMaxConfigNumber = 1e15;

// Checks for ObjectReader::read, shared by every config file's reader.
inline constexpr auto kPositive = [](double v) { return v > 0; };
inline constexpr auto kNonNegative = [](double v) { return v >= 0; };
inline constexpr auto kAtLeastOne = [](std::uint64_t v) { return v >= 1; };

// Collects every problem found in one config file, each naming its key path.
class ConfigErrors {
 public:
  explicit ConfigErrors(std::string file) : file_(std::move(file)) {}
  void add(const std::string& path, const std::string& message);
  bool empty() const { return messages_.empty(); }
  std::size_t count() const { return messages_.size(); }
  // "file: key.path: message" lines joined by newlines.
  std::string to_string() const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::string> messages_;
};

// Reads one JSON object into typed fields. A missing key leaves the field's default; a
// key of the wrong type or out of range is an error naming its path and what was
// expected; finish() reports keys nobody read (typos). A "comment" key is allowed in
// every object, for notes and citations.
class ObjectReader {
 public:
  // `node` may be null (the object is absent: every field keeps its default).
  ObjectReader(const nlohmann::json* node, std::string path, ConfigErrors& errors);
  ~ObjectReader();
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  bool has(std::string_view key) const;
  // The raw value (marked as read), or null when absent.
  const nlohmann::json* raw(std::string_view key);
  std::string path_of(std::string_view key) const;
  ConfigErrors& errors() { return errors_; }

  void read(std::string_view key, bool& out);
  void read(std::string_view key, std::string& out);
  // `what` describes the accepted values ("a positive number"); `ok` checks them.
  void read(std::string_view key, double& out, std::string_view what = "a number",
            const std::function<bool(double)>& ok = nullptr);
  void read(std::string_view key, std::uint64_t& out, std::string_view what = "a non-negative integer",
            const std::function<bool(std::uint64_t)>& ok = nullptr);
  void read(std::string_view key, std::uint32_t& out, std::string_view what = "a non-negative integer",
            const std::function<bool(std::uint64_t)>& ok = nullptr);
  // A non-negative duration written as a number of units (seconds_per_unit: 1 for "_s"
  // keys, 1e-3 for "_ms" keys).
  void read_duration(std::string_view key, engine::SimTime& out, double seconds_per_unit);
  void read_optional_duration(std::string_view key, std::optional<engine::SimTime>& out, double seconds_per_unit);
  // Optional fields: null or absent leaves std::nullopt.
  template <typename T, typename... Args>
  void read_optional(std::string_view key, std::optional<T>& out, Args&&... args) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) {
      mark(key);
      return;
    }
    T item = out.value_or(T{});
    read(key, item, std::forward<Args>(args)...);
    out = item;
  }
  // A string naming one of an enum's values.
  template <typename E, std::size_t N>
  void read_choice(std::string_view key, E& out, const EnumNames<E, N>& names) {
    std::string text;
    if (!has(key)) {
      mark(key);
      return;
    }
    const std::size_t before = error_count_;
    read(key, text);
    if (error_count_ != before) return;
    if (auto parsed = names.parse(text)) {
      out = *parsed;
    } else {
      fail(key, "expected one of " + names.accepted() + ", got '" + text + "'");
    }
  }

  void fail(std::string_view key, const std::string& message);
  // Reports unknown keys; called by the destructor if not called before.
  void finish();

 private:
  const nlohmann::json* find(std::string_view key) const;
  void mark(std::string_view key) { seen_.emplace(key); }
  void wrong_type(std::string_view key, std::string_view expected, const nlohmann::json& got);

  const nlohmann::json* node_;
  std::string path_;
  ConfigErrors& errors_;
  std::set<std::string, std::less<>> seen_;
  std::size_t error_count_ = 0;
  bool finished_ = false;
};

}  // namespace meshsim::configs
