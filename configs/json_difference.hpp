#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace meshsim::configs {

// The first place where `now` differs from `was`, walking objects key by key and lists
// item by item: "key.path[i]: was X, now Y" (values shortened), or nothing when equal.
// How a resume that is fed other inputs than its run names what changed.
std::optional<std::string> first_difference(const nlohmann::json& was, const nlohmann::json& now);

// The first key of `read` that `written` (the same value written back by its writer) lacks
// where both have an object, as a key path ("a.b[2].c"); nothing when every key is one the
// format has. Lists are walked item by item: objects of one kind share their keys. How a
// reader of a file the project writes whole refuses a typo or another tool's key.
std::optional<std::string> first_unknown_key(const nlohmann::json& read, const nlohmann::json& written);

}  // namespace meshsim::configs
