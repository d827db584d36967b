#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace meshsim::configs {

// The first place where `now` differs from `was`, walking objects key by key and lists
// item by item: "key.path[i]: was X, now Y" (values shortened), or nothing when equal.
// How a resume that is fed other inputs than its run names what changed.
std::optional<std::string> first_difference(const nlohmann::json& was, const nlohmann::json& now);

}  // namespace meshsim::configs
