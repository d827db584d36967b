#include "sim/script/script_calls.hpp"

#include <algorithm>

namespace meshsim::script {

const std::vector<CallSpec>& script_calls() {
  static const std::vector<CallSpec> calls = [] {
    std::vector<CallSpec> all = core_calls();
    for (CallSpec& call : serving_calls()) all.push_back(call);
    std::sort(all.begin(), all.end(), [](const CallSpec& a, const CallSpec& b) { return a.name < b.name; });
    return all;
  }();
  return calls;
}

const CallSpec* find_call(std::string_view name) {
  const auto& calls = script_calls();
  const auto it = std::lower_bound(calls.begin(), calls.end(), name,
                                   [](const CallSpec& call, std::string_view key) { return call.name < key; });
  return it != calls.end() && it->name == name ? &*it : nullptr;
}

}  // namespace meshsim::script
