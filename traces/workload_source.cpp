#include "traces/workload_source.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>

#include "traces/class_share_source.hpp"
#include "traces/csv_trace_reader.hpp"
#include "traces/generated_source.hpp"
#include "traces/jsonl_trace_reader.hpp"
#include "traces/servegen_source.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::traces {

ShapedSource::ShapedSource(std::unique_ptr<RequestSource> inner, SimTime window_start,
                           std::optional<SimTime> window_end, double rate_scale,
                           std::optional<std::uint64_t> max_requests, EmptyWindow empty)
    : inner_(std::move(inner)),
      window_start_(window_start),
      window_end_(window_end),
      rate_scale_(rate_scale),
      max_requests_(max_requests),
      empty_(empty) {}

Expected<std::optional<TraceRequest>> ShapedSource::next() {
  if (finished_) return std::optional<TraceRequest>();
  if (max_requests_ && emitted_ >= *max_requests_) {
    finished_ = true;
    return std::optional<TraceRequest>();
  }
  for (;;) {
    auto next = inner_->next();
    if (!next || !next->has_value()) {
      if (next) finished_ = true;
      // (Also when the inner source showed nothing: it may have opened itself at the window.)
      if (next && emitted_ == 0 && empty_ == EmptyWindow::kRefuse) return empty_window();
      return next;
    }
    TraceRequest& request = **next;
    if (!seen_any_) first_seen_ = request.arrival;
    seen_any_ = true;
    last_seen_ = request.arrival;
    if (request.arrival < window_start_) {
      ++skipped_;
      continue;
    }
    if (window_end_ && request.arrival >= *window_end_) {
      finished_ = true;  // sources are sorted: nothing later can fall inside
      if (emitted_ == 0 && empty_ == EmptyWindow::kRefuse) return empty_window();
      return std::optional<TraceRequest>();
    }
    const double offset_us = static_cast<double>((request.arrival - window_start_).us());
    const double scaled_us = offset_us / rate_scale_;
    if (scaled_us > SimTime::max_representable().us()) {
      finished_ = true;
      return Error{"rate_scale " + number_text(rate_scale_) + " moves request " + std::to_string(request.id) +
                   " to " + number_text(scaled_us * 1e-6) + " s, past the simulated time limit of 1e12 s"};
    }
    request.arrival = SimTime::from_us(static_cast<std::int64_t>(std::llround(scaled_us)));
    ++emitted_;
    return next;
  }
}

Error ShapedSource::empty_window() const {
  const std::string end = window_end_ ? number_text(window_end_->seconds()) + " s" : std::string("the end");
  const auto data_end = inner_->data_end_s();
  std::string where;
  if (skipped_ > 0 && last_seen_ < window_start_) {
    where = "its last arrives at " + number_text(last_seen_.seconds()) + " s";
  } else if (seen_any_) {
    where = "they arrive from " + number_text(first_seen_.seconds()) + " s";
  } else if (data_end) {
    where = "its data ends at " + number_text(*data_end) + " s";
  } else {
    where = "it holds none";
  }
  return Error{"workload.window: no request of " + inner_->describe() + " arrives from " +
               number_text(window_start_.seconds()) + " s to " + end + " (" + where +
               "): move the window onto the workload"};
}

double ShapedSource::progress() const {
  if (finished_) return 1.0;
  double fraction = inner_->progress();
  if (max_requests_ && *max_requests_ > 0) {
    fraction = std::max(fraction, static_cast<double>(emitted_) / static_cast<double>(*max_requests_));
  }
  return std::min(1.0, fraction);
}

Expected<std::unique_ptr<RequestSource>> open_trace_file(const TraceFileSpec& spec) {
  auto file = std::make_unique<std::ifstream>(spec.path, std::ios::binary);
  if (!*file) return Error{spec.path + ": cannot open the trace file"};
  file->seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, file->tellg()));
  file->seekg(0, std::ios::beg);
  const ColumnMapping mapping = preset_mapping(spec.format, spec.columns);
  switch (spec.format) {
    case TraceFormat::kAzureCsv:
    case TraceFormat::kCsv:
      return std::unique_ptr<RequestSource>(
          std::make_unique<CsvTraceReader>(std::move(file), spec.path, size, mapping));
    case TraceFormat::kMooncakeJsonl:
    case TraceFormat::kJsonl:
      return std::unique_ptr<RequestSource>(
          std::make_unique<JsonlTraceReader>(std::move(file), spec.path, size, mapping));
  }
  return Error{spec.path + ": unknown trace format"};
}

Status validate_shaping(const WorkloadSpec& spec) {
  if (!rate_scale_in_range(spec.rate_scale)) {
    return Error{"rate_scale: expected a factor in " + rate_scale_range() + ", got " + number_text(spec.rate_scale)};
  }
  if (spec.window_end && *spec.window_end <= spec.window_start) {
    return Error{"window: the end must be after the start"};
  }
  return Ok{};
}

Status validate_classes(const WorkloadSpec& spec) {
  if (spec.class_count == 0 || !spec.class_shares.empty()) return Ok{};
  const auto* file = std::get_if<TraceFileSpec>(&spec.source);
  const auto* servegen = std::get_if<ServeGenSpec>(&spec.source);
  if ((file != nullptr && file->columns.service_class) || (servegen != nullptr && !servegen->client_classes.empty())) {
    return Ok{};
  }
  return Error{"workload: the scenario's " + std::to_string(spec.class_count) +
               " classes of service are named by its own workload (a trace's class column or ServeGen's clients), "
               "which this workload does not have: give each class a share, or use a workload that names them"};
}

Expected<std::unique_ptr<RequestSource>> open_workload(const WorkloadSpec& spec, std::uint64_t seed) {
  if (auto status = validate_shaping(spec); !status) return status.error();
  if (auto status = validate_classes(spec); !status) return status.error();
  std::unique_ptr<RequestSource> inner;
  if (const auto* file = std::get_if<TraceFileSpec>(&spec.source)) {
    auto opened = open_trace_file(*file);
    if (!opened) return opened.error();
    inner = std::move(*opened);
  } else if (const auto* servegen = std::get_if<ServeGenSpec>(&spec.source)) {
    if (auto status = validate(*servegen); !status) return Error{"servegen: " + status.error().message};
    auto table = load_servegen(servegen->path, servegen->lengths);
    if (!table) return table.error();
    if (auto classes = classes_by_client(**table, *servegen); !classes) return classes.error();
    inner = std::make_unique<ServeGenSource>(std::move(*table), *servegen, seed, spec.window_start.seconds());
  } else {
    const auto& generator = std::get<GeneratorSpec>(spec.source);
    if (auto status = validate(generator); !status) {
      return Error{"generator '" + generator.name + "': " + status.error().message};
    }
    inner = std::make_unique<GeneratedSource>(generator, seed);
  }
  auto shaped = std::make_unique<ShapedSource>(std::move(inner), spec.window_start, spec.window_end, spec.rate_scale,
                                               spec.max_requests);
  if (spec.class_shares.empty()) return std::unique_ptr<RequestSource>(std::move(shaped));
  return std::unique_ptr<RequestSource>(std::make_unique<ClassShareSource>(std::move(shaped), spec.class_shares, seed));
}

}  // namespace meshsim::traces
