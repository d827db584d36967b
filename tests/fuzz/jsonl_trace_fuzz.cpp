// Feeds arbitrary bytes to the JSON-lines trace reader (Mooncake preset, then a generic
// mapping with date-time arrivals): requests or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "tests/fuzz/drain.hpp"
#include "traces/jsonl_trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace meshsim::traces;
  const std::string text(reinterpret_cast<const char*>(data), size);
  JsonlTraceReader mooncake(std::make_unique<std::istringstream>(text), "fuzz.jsonl", size,
                            preset_mapping(TraceFormat::kMooncakeJsonl, {}));
  drain(mooncake);
  ColumnMapping generic{"t", TimeFormat::kDateTime, "p", "o", std::string("h")};
  JsonlTraceReader mapped(std::make_unique<std::istringstream>(text), "fuzz.jsonl", size, generic);
  drain(mapped);
  return 0;
}
