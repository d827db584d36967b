#pragma once

#include <cstddef>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// A table of measurements: a CSV file whose first line names its columns, read a row at a
// time with each cell found by its column's name. What the reference readers share.
class ReferenceTable {
 public:
  // Opens `path` and reads its header; an error names the file and a missing column of
  // `required` (`layout`, if given, says which layout was expected).
  static Expected<ReferenceTable> open(const std::string& path, const std::vector<std::string>& required,
                                       const std::string& layout = "");
  // The header's columns.
  const std::vector<std::string>& header() const { return header_; }

  // Moves to the next non-empty row: false at the end; an error (a row with another count
  // of fields than the header) names the file and line.
  Expected<bool> next();
  // The current row's cell of `column`, empty where the file has no such column.
  std::string text(const std::string& column) const;
  std::size_t line() const { return line_; }
  // "path:line: ", how a row's message starts.
  std::string where() const { return path_ + ":" + std::to_string(line_) + ": "; }

 private:
  std::string path_;
  std::unique_ptr<std::ifstream> in_;
  std::vector<std::string> header_, fields_;
  std::map<std::string, std::size_t> column_;
  std::size_t line_ = 1;
};

}  // namespace meshsim::configs
