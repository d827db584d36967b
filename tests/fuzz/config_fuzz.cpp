// Feeds arbitrary bytes to the config loader, as JSON and as YAML: a config or an error
// naming the key, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "configs/config_file.hpp"
#include "configs/scenario_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto tree = nlohmann::json::parse(text, nullptr, false);
  if (!tree.is_discarded()) (void)meshsim::configs::parse_scenario(tree, "/fuzz/s.json");
  auto yaml = meshsim::configs::parse_yaml(text, "fuzz.yaml");
  if (yaml) (void)meshsim::configs::parse_scenario(*yaml, "/fuzz/s.yaml");
  return 0;
}
