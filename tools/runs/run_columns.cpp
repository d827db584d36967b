#include "tools/runs/run_columns.hpp"

#include <cstdio>
#include <optional>

namespace meshsim::cli {
namespace {

using metrics::RequestRecord;
using metrics::TbtDefinition;
using metrics::TimeseriesRow;
using engine::SimTime;

Cell seconds(const std::optional<SimTime>& time) { return time ? Cell{time->seconds()} : Cell{}; }
template <typename T>
Cell id(const std::optional<T>& value) { return value ? Cell{std::uint64_t{*value}} : Cell{}; }
Cell count(std::uint64_t value) { return Cell{value}; }
Cell fraction(const std::optional<double>& value) { return value ? Cell{*value} : Cell{}; }

}  // namespace

const std::array<RequestColumn, 16> kRequestColumns = {{
    {"id", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.id); }},
    {"arrival_s", ColumnType::kSeconds, [](const RequestRecord& r, TbtDefinition) { return seconds(r.arrival); }},
    {"prompt_tokens", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.prompt_tokens); }},
    {"output_tokens", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.output_tokens); }},
    {"status", ColumnType::kWord, [](const RequestRecord& r, TbtDefinition) { return Cell{metrics::to_string(r.status)}; }},
    {"dropped_for", ColumnType::kWord,
     [](const RequestRecord& r, TbtDefinition) { return Cell{metrics::kDropReasonNames.name(r.dropped_for)}; }},
    {"prompt_instance", ColumnType::kOptionalId, [](const RequestRecord& r, TbtDefinition) { return id(r.prompt_instance); }},
    {"instance", ColumnType::kOptionalId, [](const RequestRecord& r, TbtDefinition) { return id(r.instance); }},
    {"queueing_s", ColumnType::kSeconds, [](const RequestRecord& r, TbtDefinition) { return seconds(r.queueing()); }},
    {"ttft_s", ColumnType::kSeconds, [](const RequestRecord& r, TbtDefinition) { return seconds(r.ttft()); }},
    {"tbt_mean_s", ColumnType::kSeconds, [](const RequestRecord& r, TbtDefinition d) { return seconds(r.tbt_mean(d)); }},
    // Only a completed request's longest gap is final.
    {"tbt_max_s", ColumnType::kSeconds,
     [](const RequestRecord& r, TbtDefinition) {
       return r.status == metrics::RequestStatus::kCompleted ? seconds(r.tbt_max) : Cell{};
     }},
    {"e2e_s", ColumnType::kSeconds, [](const RequestRecord& r, TbtDefinition) { return seconds(r.e2e()); }},
    {"pauses", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.pauses); }},
    {"kv_evictions", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.kv_evictions); }},
    {"migrations", ColumnType::kCount, [](const RequestRecord& r, TbtDefinition) { return count(r.migrations); }},
}};

const std::array<TimeseriesColumn, 29> kTimeseriesColumns = {{
    {"start_s", ColumnType::kSeconds, [](const TimeseriesRow& t) { return seconds(t.start); }},
    {"end_s", ColumnType::kSeconds, [](const TimeseriesRow& t) { return seconds(t.end); }},
    {"arrivals", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.arrivals); }},
    {"completions", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.completions); }},
    {"drops", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.drops); }},
    {"queued", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.queued); }},
    {"running", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.running); }},
    {"instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.instances); }},
    {"prompt_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.prompt_instances); }},
    {"token_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.token_instances); }},
    {"mixed_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.mixed_instances); }},
    {"starting_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.starting_instances); }},
    {"active_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.active_instances); }},
    {"draining_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.draining_instances); }},
    {"inactive_instances", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.inactive_instances); }},
    {"roofline_utilisation", ColumnType::kFraction, [](const TimeseriesRow& t) { return Cell{t.roofline_utilisation}; }},
    {"busy_share", ColumnType::kFraction, [](const TimeseriesRow& t) { return Cell{t.busy_share}; }},
    {"kv_used_fraction", ColumnType::kFraction, [](const TimeseriesRow& t) { return Cell{t.kv_used_fraction}; }},
    {"output_tokens", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.output_tokens); }},
    {"serving_gpus", ColumnType::kGpus, [](const TimeseriesRow& t) { return Cell{t.serving_gpus}; }},
    {"batch_gpus", ColumnType::kGpus, [](const TimeseriesRow& t) { return Cell{t.batch_gpus}; }},
    {"batch_running", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.batch_running); }},
    {"batch_queued", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.batch_queued); }},
    {"batch_preemptions", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.batch_preemptions); }},
    {"prefix_queried_tokens", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.prefix_queried_tokens); }},
    {"prefix_hit_tokens", ColumnType::kCount, [](const TimeseriesRow& t) { return count(t.prefix_hit_tokens); }},
    {"prefix_hit_rate", ColumnType::kFraction,
     [](const TimeseriesRow& t) {
       return t.prefix_queried_tokens > 0 ? Cell{static_cast<double>(t.prefix_hit_tokens) /
                                                 static_cast<double>(t.prefix_queried_tokens)}
                                          : Cell{};
     }},
    {"prefix_hit_rate_min", ColumnType::kFraction, [](const TimeseriesRow& t) { return fraction(t.prefix_hit_rate_min); }},
    {"prefix_hit_rate_max", ColumnType::kFraction, [](const TimeseriesRow& t) { return fraction(t.prefix_hit_rate_max); }},
}};

void write_csv_cell(std::ostream& out, ColumnType type, const Cell& cell) {
  char buffer[64];
  if (const auto* integer = std::get_if<std::uint64_t>(&cell)) {
    out << *integer;
  } else if (const auto* word = std::get_if<std::string_view>(&cell)) {
    out << *word;
  } else if (const auto* real = std::get_if<double>(&cell)) {
    const int digits = type == ColumnType::kGpus ? 3 : 6;
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, *real);
    out << buffer;
  }
}

}  // namespace meshsim::cli
