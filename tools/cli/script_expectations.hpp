#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshsim::cli {

// A scenario step's "expect": what its result must contain. Objects match when every
// expected key matches (other keys are free); arrays when they have the same length and
// match element by element; numbers within 1e-9 relative; {"contains": TEXT} matches a
// string holding TEXT; anything else must be equal. Returns one message per mismatch,
// naming its path ("result.candidates[0].task_id: expected ..., got ...").
std::vector<std::string> unmet_expectations(const nlohmann::json& expected, const nlohmann::json& actual,
                                            const std::string& path = "result");

}  // namespace meshsim::cli
