#pragma once

// The columns of a run folder's requests.csv and timeseries.csv, in one place: the run
// folder writer formats them as CSV, meshsim.replay (Python) turns them into numpy
// columns, so a column added here appears in both.

#include <array>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <variant>

#include "sim/metrics/request_record.hpp"
#include "sim/metrics/run_metrics.hpp"

namespace meshsim::cli {

enum class ColumnType {
  kCount,       // an unsigned integer
  kOptionalId,  // an unsigned integer, or absent (empty in CSV, -1 in numpy)
  kSeconds,     // seconds "%.6f", or absent (empty in CSV, NaN in numpy)
  kFraction,    // a real, 6 decimals in CSV
  kGpus,        // a real, 3 decimals in CSV
  kWord,        // a short word (a request's status)
};

// A cell of a row: absent, an integer, a real or a word, as its column's type says.
using Cell = std::variant<std::monostate, std::uint64_t, double, std::string_view>;

template <typename Row, typename... Context>
struct Column {
  std::string_view name;
  ColumnType type;
  Cell (*get)(const Row&, Context...);
};

using RequestColumn = Column<metrics::RequestRecord, metrics::TbtDefinition>;
using TimeseriesColumn = Column<metrics::TimeseriesRow>;

extern const std::array<RequestColumn, 16> kRequestColumns;
extern const std::array<TimeseriesColumn, 29> kTimeseriesColumns;

// One cell in its column's fixed format (byte-identical from run to run); absent is empty.
void write_csv_cell(std::ostream& out, ColumnType type, const Cell& cell);

// "name,name,...": the header line, without its end (a run folder may add a column).
template <typename Columns>
void write_csv_names(std::ostream& out, const Columns& columns) {
  const char* separator = "";
  for (const auto& column : columns) {
    out << separator << column.name;
    separator = ",";
  }
}
template <typename Columns>
void write_csv_header(std::ostream& out, const Columns& columns) {
  write_csv_names(out, columns);
  out << '\n';
}

// A row's cells, without the line's end.
template <typename Columns, typename Row, typename... Context>
void write_csv_cells(std::ostream& out, const Columns& columns, const Row& row, Context... context) {
  const char* separator = "";
  for (const auto& column : columns) {
    out << separator;
    separator = ",";
    write_csv_cell(out, column.type, column.get(row, context...));
  }
}
template <typename Columns, typename Row, typename... Context>
void write_csv_row(std::ostream& out, const Columns& columns, const Row& row, Context... context) {
  write_csv_cells(out, columns, row, context...);
  out << '\n';
}

}  // namespace meshsim::cli
