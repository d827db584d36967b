#include "traces/column_mapping.hpp"

namespace meshsim::traces {

ColumnMapping preset_mapping(TraceFormat format, const ColumnMapping& generic) {
  switch (format) {
    case TraceFormat::kAzureCsv:
      return ColumnMapping{"TIMESTAMP", TimeFormat::kDateTime, "ContextTokens", "GeneratedTokens",
                           std::nullopt};
    case TraceFormat::kMooncakeJsonl:
      return ColumnMapping{"timestamp", TimeFormat::kMilliseconds, "input_length", "output_length",
                           "hash_ids"};
    case TraceFormat::kCsv:
    case TraceFormat::kJsonl:
      return generic;
  }
  return generic;
}

}  // namespace meshsim::traces
