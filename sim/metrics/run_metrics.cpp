#include "sim/metrics/run_metrics.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::metrics {

std::string_view to_string(RequestStatus status) {
  switch (status) {
    case RequestStatus::kCompleted: return "completed";
    case RequestStatus::kDropped: return "dropped";
    case RequestStatus::kInFlight: return "in_flight";
  }
  return "?";
}

SloVerdict judge(const RequestRecord& record, const SloTargets& slo) {
  if (record.status != RequestStatus::kCompleted || !record.first_token || !record.finished) return {};
  return SloVerdict{*record.ttft() <= slo.ttft_for(record.prompt_tokens),
                    *record.tbt_mean(slo.tbt_definition) <= slo.tbt};
}

RunMetrics::RunMetrics(SloTargets slo, const std::vector<SloTargets>& class_slos) : slo_(slo) {
  classes_.resize(class_slos.size());
  for (std::size_t c = 0; c < class_slos.size(); ++c) classes_[c].slo = class_slos[c];
}

void RunMetrics::on_arrival(SimTime now, std::uint8_t service_class) {
  ++counts_.arrived;
  last_arrival_ = now;
  if (classes_.empty()) return;
  MESHSIM_CHECK(service_class < classes_.size(), "on_arrival: a request of a class the run does not have");
  ++classes_[service_class].counts.arrived;
}

void RunMetrics::set_in_flight(std::uint64_t in_flight) {
  counts_.in_flight = in_flight;
  if (classes_.empty()) return;
  std::uint64_t sum = 0;
  for (ClassFigures& c : classes_) {
    c.counts.in_flight = c.counts.arrived - c.counts.completed - c.counts.dropped;
    sum += c.counts.in_flight;
  }
  MESHSIM_CHECK(sum == in_flight, "set_in_flight: the classes' requests in flight do not add up to the run's");
}

void RunMetrics::on_finished(const RequestRecord& record) {
  ClassFigures* figures = nullptr;
  if (!classes_.empty()) {
    MESHSIM_CHECK(record.service_class < classes_.size(), "on_finished: a request of a class the run does not have");
    figures = &classes_[record.service_class];
  }
  if (record.status == RequestStatus::kDropped) {
    ++counts_.dropped;
    ++counts_.dropped_for[static_cast<std::size_t>(record.dropped_for)];
    if (figures != nullptr) {
      ++figures->counts.dropped;
      ++figures->counts.dropped_for[static_cast<std::size_t>(record.dropped_for)];
    }
    return;
  }
  MESHSIM_CHECK(record.status == RequestStatus::kCompleted && record.finished && record.first_token &&
                    record.started,
                "on_finished: a completed request needs its start, first token and finish times");
  ++counts_.completed;
  migrations_ += record.migrations;
  MESHSIM_CHECK(counts_.completed + counts_.dropped <= counts_.arrived,
                "on_finished: more requests finished than arrived");
  const SimTime ttft = *record.ttft();
  ttft_.add(ttft.seconds());
  const SimTime tbt = *record.tbt_mean(slo_.tbt_definition);
  tbt_.add(tbt.seconds());
  e2e_.add(record.e2e()->seconds());
  queueing_.add(record.queueing()->seconds());
  const SloVerdict verdict = judge(record, figures != nullptr ? figures->slo : slo_);
  ttft_met_ += verdict.ttft_ok;
  tbt_met_ += verdict.tbt_ok;
  slo_met_ += verdict.met();
  output_tokens_ += record.output_tokens;
  prompt_tokens_ += record.prompt_tokens;
  if (figures == nullptr) return;
  ++figures->counts.completed;
  figures->ttft.add(ttft.seconds());
  figures->tbt.add(tbt.seconds());
  figures->ttft_met += verdict.ttft_ok;
  figures->tbt_met += verdict.tbt_ok;
  figures->slo_met += verdict.met();
  figures->output_tokens += record.output_tokens;
}

LatencySummary RunMetrics::summarize(const QuantileSketch& sketch) {
  return LatencySummary{sketch.count(),         sketch.mean(),       sketch.quantile(0.5),
                        sketch.quantile(0.9),   sketch.quantile(0.99), sketch.max()};
}

}  // namespace meshsim::metrics
