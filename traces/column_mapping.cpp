#include "traces/column_mapping.hpp"

namespace meshsim::traces {

// A preset names the request fields; the class column, which no public trace has, is the
// user's in every format.
ColumnMapping preset_mapping(TraceFormat format, const ColumnMapping& generic) {
  switch (format) {
    case TraceFormat::kAzureCsv:
      return ColumnMapping{"TIMESTAMP", TimeFormat::kDateTime, "ContextTokens", "GeneratedTokens",
                           std::nullopt, generic.service_class, generic.class_names};
    case TraceFormat::kMooncakeJsonl:
      return ColumnMapping{"timestamp", TimeFormat::kMilliseconds, "input_length", "output_length",
                           "hash_ids", generic.service_class, generic.class_names};
    case TraceFormat::kCsv:
    case TraceFormat::kJsonl:
      return generic;
  }
  return generic;
}

}  // namespace meshsim::traces
