// Feeds arbitrary bytes to the config loader, as JSON and as YAML: a config or an error
// naming the key, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "configs/config_file.hpp"
#include "configs/scenario_config.hpp"
#include "traces/json_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)meshsim::configs::parse_scenario(meshsim::traces::parse_json_text(text), "/fuzz/s.json");
  } catch (const std::exception&) {
    // Not JSON, or nested too deep: read_config_file reports these as errors.
  }
  auto yaml = meshsim::configs::parse_yaml(text, "fuzz.yaml");
  if (yaml) (void)meshsim::configs::parse_scenario(*yaml, "/fuzz/s.yaml");
  return 0;
}
