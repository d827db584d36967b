#include "configs/object_reader.hpp"

#include <cmath>
#include <limits>

#include "traces/json_text.hpp"

namespace meshsim::configs {

using nlohmann::json;

namespace {

std::string shown(const json& value) { return traces::json_for_message(value); }

}  // namespace

void ConfigErrors::add(const std::string& path, const std::string& message) {
  messages_.push_back(file_ + ": " + (path.empty() ? "(top level)" : path) + ": " + message);
}

std::string ConfigErrors::to_string() const {
  std::string out;
  for (const auto& message : messages_) out += (out.empty() ? "" : "\n") + message;
  return out;
}

ObjectReader::ObjectReader(const json* node, std::string path, ConfigErrors& errors)
    : node_(node), path_(std::move(path)), errors_(errors) {
  if (node_ != nullptr && node_->is_null()) node_ = nullptr;
  if (node_ != nullptr && !node_->is_object()) {
    errors_.add(path_, "expected an object, got " + shown(*node_));
    node_ = nullptr;
  }
}

ObjectReader::~ObjectReader() {
  if (!finished_) finish();
}

std::string ObjectReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const json* ObjectReader::find(std::string_view key) const {
  if (node_ == nullptr) return nullptr;
  const auto it = node_->find(key);
  return it == node_->end() ? nullptr : &*it;
}

bool ObjectReader::has(std::string_view key) const {
  const json* value = find(key);
  return value != nullptr && !value->is_null();
}

const json* ObjectReader::raw(std::string_view key) {
  mark(key);
  const json* value = find(key);
  return value != nullptr && !value->is_null() ? value : nullptr;
}

void ObjectReader::fail(std::string_view key, const std::string& message) {
  ++error_count_;
  errors_.add(path_of(key), message);
}

void ObjectReader::wrong_type(std::string_view key, std::string_view expected, const json& got) {
  fail(key, "expected " + std::string(expected) + ", got " + shown(got));
}

void ObjectReader::read(std::string_view key, bool& out) {
  const json* value = raw(key);
  if (value == nullptr) return;
  if (!value->is_boolean()) return wrong_type(key, "true or false", *value);
  out = value->get<bool>();
}

void ObjectReader::read(std::string_view key, std::string& out) {
  const json* value = raw(key);
  if (value == nullptr) return;
  if (!value->is_string()) return wrong_type(key, "a string", *value);
  out = value->get<std::string>();
}

void ObjectReader::read(std::string_view key, double& out, std::string_view what,
                        const std::function<bool(double)>& ok) {
  const json* value = raw(key);
  if (value == nullptr) return;
  if (!value->is_number()) return wrong_type(key, what, *value);
  const double number = value->get<double>();
  if (!std::isfinite(number) || (ok && !ok(number))) return wrong_type(key, what, *value);
  if (std::fabs(number) > kMaxConfigNumber) {
    return wrong_type(key, std::string(what) + " of magnitude at most 1e15", *value);
  }
  out = number;
}

void ObjectReader::read(std::string_view key, std::uint64_t& out, std::string_view what,
                        const std::function<bool(std::uint64_t)>& ok) {
  const json* value = raw(key);
  if (value == nullptr) return;
  // A non-negative signed integer is one too (JSON built in code, not parsed from text).
  if (!value->is_number_integer() || (!value->is_number_unsigned() && value->get<std::int64_t>() < 0)) {
    return wrong_type(key, what, *value);
  }
  const auto number = value->get<std::uint64_t>();
  if (ok && !ok(number)) return wrong_type(key, what, *value);
  out = number;
}

void ObjectReader::read(std::string_view key, std::uint32_t& out, std::string_view what,
                        const std::function<bool(std::uint64_t)>& ok) {
  std::uint64_t wide = out;
  const std::size_t before = error_count_;
  read(key, wide, what, [&ok](std::uint64_t v) {
    return v <= std::numeric_limits<std::uint32_t>::max() && (!ok || ok(v));
  });
  if (error_count_ == before) out = static_cast<std::uint32_t>(wide);
}

void ObjectReader::read_duration(std::string_view key, engine::SimTime& out, double seconds_per_unit) {
  double value = out.seconds() / seconds_per_unit;
  const std::size_t before = error_count_;
  const double most = engine::SimTime::kMaxSeconds / seconds_per_unit;
  read(key, value,
       seconds_per_unit == 1.0 ? "a number of seconds in [0, 1e12]" : "a number of milliseconds in [0, 1e15]",
       [most](double v) { return v >= 0 && v <= most; });
  if (error_count_ == before) out = engine::SimTime::from_seconds(value * seconds_per_unit);
}

void ObjectReader::read_optional_duration(std::string_view key, std::optional<engine::SimTime>& out,
                                          double seconds_per_unit) {
  if (!has(key)) {
    mark(key);
    return;
  }
  engine::SimTime value = out.value_or(engine::SimTime::zero());
  const std::size_t before = error_count_;
  read_duration(key, value, seconds_per_unit);
  if (error_count_ == before) out = value;
}

void ObjectReader::finish() {
  finished_ = true;
  if (node_ == nullptr) return;
  for (const auto& [key, value] : node_->items()) {
    if (key == "comment" || seen_.count(key) != 0) continue;
    std::string known;
    for (const auto& name : seen_) known += (known.empty() ? "" : ", ") + name;
    fail(key, "unknown key (known keys here: " + known + ")");
  }
}

}  // namespace meshsim::configs
