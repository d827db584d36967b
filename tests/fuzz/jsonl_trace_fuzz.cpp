// Feeds arbitrary bytes to the JSON-lines trace reader (Mooncake preset, then a generic
// mapping with date-time arrivals): requests or an error, never a crash. Each line is also
// read by the plain scanner alone and the full parser alone: whatever the scanner
// accepts, the full parser must read the same.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "tests/fuzz/drain.hpp"
#include "traces/jsonl_trace_reader.hpp"
#include "traces/plain_json_row.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace meshsim::traces;
  const std::string text(reinterpret_cast<const char*>(data), size);
  JsonlTraceReader mooncake(std::make_unique<std::istringstream>(text), "fuzz.jsonl", size,
                            preset_mapping(TraceFormat::kMooncakeJsonl, {}));
  drain(mooncake);
  ColumnMapping generic{"t", TimeFormat::kDateTime, "p", "o", std::string("h"), std::nullopt, {}};
  JsonlTraceReader mapped(std::make_unique<std::istringstream>(text), "fuzz.jsonl", size, generic);
  drain(mapped);

  for (const auto& mapping : {preset_mapping(TraceFormat::kMooncakeJsonl, {}), generic}) {
    for (std::size_t start = 0; start <= text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view line = std::string_view(text).substr(start, end - start);
      ParsedRow plain, full;
      if (parse_plain_json_row(line, mapping, plain)) {
        if (!parse_json_row(line, mapping, full) || plain.timestamp_us != full.timestamp_us ||
            plain.prompt_tokens != full.prompt_tokens || plain.output_tokens != full.output_tokens ||
            plain.hash_ids != full.hash_ids) {
          std::abort();
        }
      }
      start = end + 1;
    }
  }
  return 0;
}
