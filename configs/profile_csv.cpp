#include "configs/profile_csv.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>

#include "traces/field_parsing.hpp"

namespace meshsim::configs {

Expected<std::vector<cluster::ProfileRow>> read_profile_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot open the profile"};
  std::string line;
  std::vector<std::string> fields;
  if (!std::getline(in, line)) return Error{path + ": the file is empty: expected a header line"};
  traces::split_csv_record(line, fields);
  const std::array<const char*, 8> names = {"model",      "hardware",   "tensor_parallel", "prompt_size",
                                            "batch_size", "token_size", "prompt_time",     "token_time"};
  std::array<std::size_t, 8> column{};
  for (std::size_t k = 0; k < names.size(); ++k) {
    const auto it = std::find(fields.begin(), fields.end(), names[k]);
    if (it == fields.end()) return Error{path + ":1: header: missing column '" + names[k] + "'"};
    column[k] = static_cast<std::size_t>(it - fields.begin());
  }
  const std::size_t width = fields.size();
  std::vector<cluster::ProfileRow> rows;
  for (std::uint64_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!traces::split_csv_record(line, fields) || fields.size() != width) {
      return Error{where + "expected " + std::to_string(width) + " fields as in the header"};
    }
    cluster::ProfileRow row;
    row.model = fields[column[0]];
    row.hardware = fields[column[1]];
    auto count = [&](std::size_t k, std::uint32_t& out) -> Status {
      const auto value = traces::parse_token_count(fields[column[k]]);
      if (!value) return Error{where + "column '" + names[k] + "': expected a positive integer"};
      out = *value;
      return Ok{};
    };
    auto time = [&](std::size_t k, double& out) -> Status {
      const std::string& text = fields[column[k]];
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
      if (ec != std::errc() || end != text.data() + text.size() || !(out > 0) || !std::isfinite(out)) {
        return Error{where + "column '" + names[k] + "': expected a positive number of milliseconds"};
      }
      return Ok{};
    };
    for (const Status& s : {count(2, row.tensor_parallel), count(3, row.prompt_size), count(4, row.batch_size),
                            count(5, row.token_size), time(6, row.prompt_time_ms), time(7, row.token_time_ms)}) {
      if (!s) return s.error();
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return Error{path + ": no profile rows"};
  return rows;
}

}  // namespace meshsim::configs
