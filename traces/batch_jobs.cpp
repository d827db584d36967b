#include "traces/batch_jobs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <unordered_map>

#include "sim/engine/rng.hpp"
#include "traces/field_parsing.hpp"

namespace meshsim::traces {
namespace {

constexpr const char* kOpenbColumns[] = {"name",     "cpu_milli", "memory_mib",    "num_gpu",       "gpu_milli",
                                         "gpu_spec", "qos",       "pod_phase",     "creation_time", "deletion_time",
                                         "scheduled_time"};

constexpr const char* kNodeColumns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

// A non-negative decimal integer no larger than 1e13 (milli-units and seconds), or none
// when the field is empty.
Expected<std::optional<std::int64_t>> count_field(const std::vector<std::string>& fields, std::size_t column,
                                                   const char* name, const std::string& where) {
  const std::string& text = fields[column];
  if (text.empty()) return std::optional<std::int64_t>{};
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 10'000'000'000'000) {
    return Error{where + ": " + name + " must be a whole number in [0, 1e13], got " + quote_for_message(text)};
  }
  return std::optional<std::int64_t>(value);
}

// Reads a CSV file whose header must be exactly `columns` (`what` names the file kind in
// errors), calling `row` with each non-blank record's fields and its "file:line"; CRLF is
// accepted. The first error (row's own, or a record with the wrong number of fields)
// stops the reading and is returned.
template <std::size_t N, typename Row>
Status for_each_csv_row(const std::string& path, const char* const (&columns)[N], const char* what, Row&& row) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot open the " + what};
  std::string line;
  std::vector<std::string> fields;
  if (!std::getline(in, line)) return Error{path + ": empty file, expected a header line"};
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (!split_csv_record(line, fields) || fields.size() != N || !std::equal(fields.begin(), fields.end(), columns)) {
    std::string expected;
    for (const char* column : columns) expected += (expected.empty() ? "" : ",") + std::string(column);
    return Error{path + ":1: expected the " + what + " header " + expected + ", got " + quote_for_message(line)};
  }
  std::uint64_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    if (!split_csv_record(line, fields) || fields.size() != N) {
      return Error{where + ": expected " + std::to_string(N) + " comma-separated fields, got " + quote_for_message(line)};
    }
    if (auto status = row(fields, where); !status) return status;
  }
  return Ok{};
}

// The first column's names seen so far: the scheduler keys pods and nodes by name, so a
// second row of one name is refused naming both rows.
class UniqueNames {
 public:
  explicit UniqueNames(const char* what) : what_(what) {}
  Status add(const std::string& name, const std::string& where) {
    const auto [it, fresh] = rows_.emplace(name, where);
    if (fresh) return Ok{};
    return Error{where + ": " + what_ + " '" + name + "' is named by " + it->second + " too: names must be unique"};
  }

 private:
  const char* what_;
  std::unordered_map<std::string, std::string> rows_;  // name -> where it first appeared
};

}  // namespace

Expected<std::vector<BatchJobRecord>> read_openb_pods(const std::string& path, const OpenbPodOptions& options) {
  std::vector<BatchJobRecord> jobs;
  UniqueNames names("pod");
  const auto read = for_each_csv_row(path, kOpenbColumns, "openb pod list", [&](const std::vector<std::string>& fields,
                                                                            const std::string& where) -> Status {
    if (auto unique = names.add(fields[0], where); !unique) return unique;
    std::int64_t value[11] = {};
    bool present[11] = {};
    for (const std::size_t column : {1, 2, 3, 4, 8, 9, 10}) {
      auto parsed = count_field(fields, column, kOpenbColumns[column], where);
      if (!parsed) return parsed.error();
      present[column] = parsed->has_value();
      value[column] = parsed->value_or(0);
    }
    for (const std::size_t column : {1, 2, 3, 4, 8, 9}) {
      if (!present[column]) return Error{where + ": " + kOpenbColumns[column] + " is empty"};
    }
    if (value[4] > 1000) {
      return Error{where + ": gpu_milli must be in [0, 1000] (a share of one GPU), got " + fields[4]};
    }
    const std::int64_t start = present[10] ? value[10] : value[8];
    if (value[9] < start) {
      return Error{where + ": deletion_time " + fields[9] + " is before the pod started (" + std::to_string(start) +
                   ")"};
    }
    // Before the window: only what was still running at its start, arriving at once.
    const double created = static_cast<double>(value[8]);
    const double runs_from = std::max(static_cast<double>(start), options.start_s);
    if (static_cast<double>(value[9]) <= options.start_s && options.start_s > 0) return Ok{};
    const double arrival = std::max(0.0, created - options.start_s) * options.arrival_scale;
    const double run = (static_cast<double>(value[9]) - runs_from) * options.duration_scale;
    if (arrival > kMaxBatchSeconds || run > kMaxBatchSeconds) {
      return Error{where + ": the scaled arrival or run time exceeds 1e9 s (arrival_scale " +
                   std::to_string(options.arrival_scale) + ", duration_scale " + std::to_string(options.duration_scale) +
                   ")"};
    }
    BatchJobRecord job;
    job.name = fields[0];
    job.arrival_s = arrival;
    job.duration_s = std::max(options.min_duration_s, run);
    job.cpu = static_cast<double>(value[1]) / 1000.0;
    job.memory_mb = static_cast<double>(value[2]) * 1.048576;  // MiB -> MB
    job.gpu = static_cast<double>(value[3] * value[4]) / 1000.0;
    job.job_class = fields[6];
    jobs.push_back(std::move(job));
    return Ok{};
  });
  if (!read) return read.error();
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const BatchJobRecord& a, const BatchJobRecord& b) { return a.arrival_s < b.arrival_s; });
  if (options.limit && jobs.size() > *options.limit) jobs.resize(*options.limit);
  return jobs;
}

std::optional<std::string> check(const BatchGeneratorSpec& spec) {
  if (!(spec.duration_s > 0 && spec.duration_s <= kMaxBatchSeconds)) return "duration_s must be in (0, 1e9]";
  for (const auto& c : spec.classes) {
    const std::string where = "class '" + c.job_class + "': ";
    if (c.job_class.empty()) return "every class needs a name";
    if (!(c.rate_per_s >= 0 && c.rate_per_s <= 1e4)) return where + "rate_per_s must be in [0, 1e4]";
    if (!(c.duration_median_s > 0 && c.duration_median_s <= 1e9)) return where + "duration_median_s must be in (0, 1e9]";
    if (!(c.duration_sigma >= 0 && c.duration_sigma <= 10)) return where + "duration_sigma must be in [0, 10]";
    if (c.shapes.empty()) return where + "needs at least one shape";
    double weight = 0;
    for (const auto& shape : c.shapes) {
      if (!(shape.gpu >= 0 && shape.cpu >= 0 && shape.memory_mb >= 0 && shape.weight >= 0) ||
          shape.gpu + shape.cpu + shape.memory_mb <= 0 || shape.gpu > 1e6 || shape.cpu > 1e6 || shape.memory_mb > 1e12) {
        return where + "a shape needs non-negative gpu, cpu and memory_mb, not all zero, and a weight >= 0";
      }
      weight += shape.weight;
    }
    if (!(weight > 0)) return where + "the shapes' weights must not all be zero";
  }
  // Jobs are generated before the run: their expected number is bounded so a typo (a rate
  // per hour given per second over a long span) is an error, not hours of work and memory.
  double expected = 0;
  for (const auto& c : spec.classes) expected += c.rate_per_s * spec.duration_s;
  if (expected > kMaxGeneratedJobs) {
    return "the classes' rates over duration_s make about " + std::to_string(static_cast<std::uint64_t>(expected)) +
           " jobs, more than 10,000,000";
  }
  return std::nullopt;
}

std::vector<BatchJobRecord> generate_batch_jobs(const BatchGeneratorSpec& spec, std::uint64_t seed) {
  std::vector<BatchJobRecord> jobs;
  for (const auto& c : spec.classes) {
    if (c.rate_per_s <= 0) continue;
    engine::Rng rng(engine::derive_seed(seed, "batch/" + c.job_class));
    double total_weight = 0;
    for (const auto& shape : c.shapes) total_weight += shape.weight;
    std::uint64_t n = 0;
    for (double t = rng.exponential(c.rate_per_s); t < spec.duration_s; t += rng.exponential(c.rate_per_s)) {
      double pick = rng.uniform() * total_weight;
      const BatchShape* shape = &c.shapes.back();
      for (const auto& s : c.shapes) {
        if (pick < s.weight) {
          shape = &s;
          break;
        }
        pick -= s.weight;
      }
      BatchJobRecord job;
      job.name = c.job_class + "-" + std::to_string(n++);
      job.arrival_s = t;
      job.duration_s = std::min(kMaxBatchSeconds, c.duration_median_s * std::exp(c.duration_sigma * rng.normal()));
      job.gpu = shape->gpu;
      job.cpu = shape->cpu;
      job.memory_mb = shape->memory_mb;
      job.job_class = c.job_class;
      job.checkpoint_interval_s = c.checkpoint_interval_s;
      jobs.push_back(std::move(job));
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const BatchJobRecord& a, const BatchJobRecord& b) { return a.arrival_s < b.arrival_s; });
  return jobs;
}

Expected<std::vector<NodeRecord>> read_openb_nodes(const std::string& path) {
  std::vector<NodeRecord> nodes;
  UniqueNames names("node");
  const auto read = for_each_csv_row(path, kNodeColumns, "openb node list", [&](const std::vector<std::string>& fields,
                                                                           const std::string& where) -> Status {
    if (auto unique = names.add(fields[0], where); !unique) return unique;
    std::int64_t value[4] = {};
    for (const std::size_t column : {1, 2, 3}) {
      auto parsed = count_field(fields, column, kNodeColumns[column], where);
      if (!parsed) return parsed.error();
      if (!parsed->has_value()) return Error{where + ": " + kNodeColumns[column] + " is empty"};
      value[column] = **parsed;
    }
    if (value[3] > 1024) return Error{where + ": gpu must be at most 1024 per node, got " + fields[3]};
    nodes.push_back(NodeRecord{fields[0], static_cast<double>(value[1]) / 1000.0,
                               static_cast<double>(value[2]) * 1.048576, static_cast<std::uint32_t>(value[3]),
                               fields[4]});
    return Ok{};
  });
  if (!read) return read.error();
  return nodes;
}

}  // namespace meshsim::traces
