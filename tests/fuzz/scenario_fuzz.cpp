// Feeds arbitrary JSON to the scenario runner with the invariant checker on: a result per
// step or an error naming the step, never a crash and never a broken ledger (exit 70).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "tools/cli/scenario_command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto script = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (script.is_discarded()) return 0;
  std::ostringstream out, err;
  const meshsim::cli::ScenarioCommandOptions options{"fuzz.json", /*check=*/true, /*metrics=*/"", /*allow_files=*/false};
  if (meshsim::cli::run_scenario(script, options, out, err) == 70) std::abort();  // an invariant broke
  return 0;
}
