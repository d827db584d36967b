#pragma once

#include <string_view>

#include "traces/column_mapping.hpp"
#include "traces/line_trace_reader.hpp"

namespace meshsim::traces {

// Reads a JSON-lines row without building a document, for the plain lines real traces
// have (Mooncake's: a flat object of integers and one array of integer block ids).
// Returns true with `row` filled only when the line is plain enough that the result is
// certainly what the full JSON parser would give; anything else (escapes, non-ASCII
// strings, nesting, fractions or signs in the mapped fields, a repeated mapped key, a
// missing key, an out-of-range value) returns false, and the caller parses the line with
// the full parser, which owns every error message. `row.hash_ids` may then hold a partial
// list; the caller clears it.
bool parse_plain_json_row(std::string_view line, const ColumnMapping& mapping, ParsedRow& row);

}  // namespace meshsim::traces
