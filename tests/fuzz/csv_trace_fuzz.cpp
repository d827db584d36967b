// Feeds arbitrary bytes to the CSV trace reader (Azure preset, then a generic mapping with
// numeric seconds): it must return requests or an error, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "tests/fuzz/drain.hpp"
#include "traces/csv_trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace meshsim::traces;
  const std::string text(reinterpret_cast<const char*>(data), size);
  CsvTraceReader azure(std::make_unique<std::istringstream>(text), "fuzz.csv", size,
                       preset_mapping(TraceFormat::kAzureCsv, {}));
  drain(azure);
  ColumnMapping generic{"t", TimeFormat::kSeconds, "p", "o", std::nullopt, std::nullopt, {}};
  CsvTraceReader mapped(std::make_unique<std::istringstream>(text), "fuzz.csv", size, generic);
  drain(mapped);
  return 0;
}
