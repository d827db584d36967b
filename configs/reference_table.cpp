#include "configs/reference_table.hpp"

#include "traces/field_parsing.hpp"

namespace meshsim::configs {
namespace {

bool read_line(std::ifstream& in, std::string& line) {
  if (!std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace

Expected<ReferenceTable> ReferenceTable::open(const std::string& path, const std::vector<std::string>& required,
                                              const std::string& layout) {
  ReferenceTable table;
  table.path_ = path;
  table.in_ = std::make_unique<std::ifstream>(path);
  if (!*table.in_) return Error{path + ": cannot open"};
  std::string line;
  if (!read_line(*table.in_, line) || !traces::split_csv_record(line, table.header_)) {
    return Error{path + ":1: expected a header"};
  }
  for (std::size_t i = 0; i < table.header_.size(); ++i) table.column_[table.header_[i]] = i;
  for (const std::string& name : required) {
    if (!table.column_.count(name)) {
      return Error{path + ":1: no column '" + name + "'" + (layout.empty() ? "" : " (expected " + layout + ")")};
    }
  }
  return table;
}

Expected<bool> ReferenceTable::next() {
  std::string line;
  do {
    if (!read_line(*in_, line)) return false;
    ++line_;
  } while (line.empty());
  if (!traces::split_csv_record(line, fields_) || fields_.size() != header_.size()) {
    return Error{where() + "expected " + std::to_string(header_.size()) + " fields"};
  }
  return true;
}

std::string ReferenceTable::text(const std::string& column) const {
  const auto it = column_.find(column);
  return it == column_.end() ? std::string() : fields_[it->second];
}

}  // namespace meshsim::configs
