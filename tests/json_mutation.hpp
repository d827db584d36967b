#pragma once

// Random mutations of a JSON document, for property tests that feed commands and loaders
// inputs no one wrote: values of another type or out of every range, numbers nudged, keys
// removed or unknown, values wrapped in lists.
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace meshsim::mutation {

using json = nlohmann::json;

// Values no input expects, or expects within bounds: types, signs, zero, a fraction,
// beyond 32 and 64 bits, empty and odd text, containers.
inline std::vector<nlohmann::json> palette() {
  return {nullptr, true, false, 0, -1, 1, 0.5, -0.5, 1e300, -1e300, 4294967296ULL,
          18446744073709551615ULL, INT64_MIN, "", "x", "-1", "1e999", json::array(), json::object(),
          json::array({0}), json{{"a", 1}}};
}

// Durations a script advances by stay small: a script advancing 2^32 s on a cluster with a
// 1 s timer is 4 billion events, its own (linear) cost, not an error.
inline bool is_duration_key(const std::string& key) { return key == "seconds" || key == "until_s"; }

// Every value's pointer in `doc`.
inline void pointers(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                     std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) pointers(value, at / key, out);
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) pointers(doc[i], at / i, out);
  }
}

// One to three random changes to `doc`: a value replaced from the palette or nudged, a key
// removed or added, a value wrapped in a list.
inline nlohmann::json mutated(nlohmann::json doc, std::mt19937_64& rng) {
  const auto values = palette();
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (std::size_t changes = 1 + pick(3); changes > 0; --changes) {
    std::vector<json::json_pointer> all;
    pointers(doc, json::json_pointer(), all);
    const json::json_pointer at = all[pick(all.size())];
    const bool root = at.empty();
    const std::string key = root ? std::string() : at.back();
    switch (pick(5)) {
      case 4: {  // a number nudged within reason (zero, half, double, ten times), or another value
        if (root) break;
        json& value = doc[at];
        static const double kFactors[] = {0, 0.5, 2, 10};
        const double factor = kFactors[pick(4)];
        if (value.is_number_unsigned()) {
          value = static_cast<std::uint64_t>(static_cast<double>(value.get<std::uint64_t>()) * factor);
        } else if (value.is_number_integer()) {
          value = static_cast<std::int64_t>(static_cast<double>(value.get<std::int64_t>()) * factor);
        } else if (value.is_number()) {
          value = value.get<double>() * factor;
        } else if (value.is_boolean()) {
          value = !value.get<bool>();
        }
        break;
      }
      case 0: {  // another value
        if (root) break;
        json value = values[pick(values.size())];
        if (is_duration_key(key) && value.is_number() && std::abs(value.get<double>()) > 1e6) value = -1;
        doc[at] = value;
        break;
      }
      case 1: {  // removed
        if (root) break;
        json& parent = doc[at.parent_pointer()];
        if (parent.is_object()) parent.erase(key);
        if (parent.is_array()) parent.erase(parent.begin() + static_cast<std::ptrdiff_t>(std::stoul(key)));
        break;
      }
      case 2: {  // an unknown key beside it
        json& target = doc[at].is_object() ? doc[at] : doc[root ? at : at.parent_pointer()];
        if (target.is_object()) target["no_such_key"] = 1;
        break;
      }
      default:  // wrapped in a list
        if (!root) doc[at] = json::array({doc[at]});
        break;
    }
  }
  return doc;
}

}  // namespace meshsim::mutation
