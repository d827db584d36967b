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

void RunMetrics::on_finished(const RequestRecord& record) {
  if (record.status == RequestStatus::kDropped) {
    ++counts_.dropped;
    ++counts_.dropped_for[static_cast<std::size_t>(record.dropped_for)];
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
  const SloVerdict verdict = judge(record, slo_);
  ttft_met_ += verdict.ttft_ok;
  tbt_met_ += verdict.tbt_ok;
  slo_met_ += verdict.met();
  output_tokens_ += record.output_tokens;
  prompt_tokens_ += record.prompt_tokens;
}

LatencySummary RunMetrics::summarize(const QuantileSketch& sketch) {
  return LatencySummary{sketch.count(),         sketch.mean(),       sketch.quantile(0.5),
                        sketch.quantile(0.9),   sketch.quantile(0.99), sketch.max()};
}

}  // namespace meshsim::metrics
