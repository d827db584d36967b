#include "sim/run/slo_capacity.hpp"

#include <utility>

#include "sim/engine/check.hpp"
#include "sim/run/scenario_run.hpp"

namespace meshsim::run {
namespace {

// Judges each request that leaves, and at the end (`end`) each one still in the system
// that has already missed: past its TTFT target without a first token, or given it late.
// One still in the system on time is not judged: its outcome is unknown.
class Judge final : public replay::ReplayObserver {
 public:
  Judge(metrics::SloBook slos, engine::SimTime warmup, engine::SimTime end)
      : slos_(std::move(slos)), warmup_(warmup), end_(end) {}

  void on_request(const metrics::RequestRecord& record) override {
    if (!metrics::slo_judges(record) || record.arrival < warmup_) return;
    if (record.status == metrics::RequestStatus::kInFlight) {
      const engine::SimTime due = record.arrival + slos_.of(record).ttft_for(record.prompt_tokens);
      if (record.first_token ? *record.first_token <= due : end_ <= due) return;
      ++judged;
      ++unfinished;
      return;
    }
    ++judged;
    met += metrics::judge(record, slos_.of(record)).met();
  }

  std::uint64_t judged = 0, met = 0, unfinished = 0;

 private:
  metrics::SloBook slos_;
  engine::SimTime warmup_, end_;
};

}  // namespace

SloProbe probe_slo(const configs::ScenarioConfig& config, const configs::Catalog& catalog, double rate_scale,
                   const ProbeRequests& requests, engine::SimTime warmup, const std::string& config_file) {
  SloProbe p;
  p.rate_scale = rate_scale;
  configs::ScenarioConfig played = config;
  played.autoscaler = configs::AutoscalerSpec{};
  RunHooks hooks;
  if (requests) {
    hooks.source = requests(rate_scale);
  } else {
    played.workload.rate_scale = rate_scale;
  }
  Judge judge(metrics::slo_book(played.replay.slo, played.replay.classes), engine::SimTime::from_seconds(warmup.seconds() / rate_scale),
              played.replay.until.value_or(engine::SimTime::max()));
  const std::string& file = config_file.empty() ? played.name : config_file;
  auto run = ScenarioRun::create(played, file, catalog, judge, std::move(hooks));
  if (!run) {
    p.error = run.error().message;
    return p;
  }
  try {
    (*run)->start();
    if (auto ran = (*run)->advance_until(played.replay.until.value_or(engine::SimTime::max())); !ran) {
      p.error = ran.error().message;
      return p;
    }
    auto result = (*run)->finish();
    if (!result) {
      p.error = result.error().message;
      return p;
    }
    const metrics::RunMetrics& m = (*run)->replay().metrics();
    const auto& counts = m.counts();
    p.arrived = counts.arrived;
    p.judged = judge.judged;
    p.met = judge.met;
    p.unfinished = judge.unfinished;
    p.over_context = counts.dropped_by(metrics::DropReason::kOverContext);
    p.other_drops = counts.dropped - p.over_context;
    p.attainment = p.judged > 0 ? static_cast<double>(p.met) / static_cast<double>(p.judged) : 0.0;
    p.offered_per_s = m.offered_per_s();
    // Over the arrivals' span, as offered load is (the run's end adds its drain).
    p.goodput_per_s = m.arrival_span_s() > 0 ? static_cast<double>(p.met) / m.arrival_span_s() : 0.0;
    p.ttft_p50_s = m.ttft().p50;
    p.ttft_p99_s = m.ttft().p99;
    p.tbt_p99_s = m.tbt().p99;
    p.e2e_p50_s = m.e2e().p50;
    p.gpu_hours = result->gpu_hours;
    p.cost_usd = result->cost;
    p.overloaded = result->overload.overloaded;
  } catch (const RangeError& e) {
    p.error = file + ": " + e.what();
  }
  return p;
}

const SloProbe* SloCapacity::at_answer() const {
  if (!rate_scale) return nullptr;
  for (const SloProbe& p : probes) {
    if (p.rate_scale == *rate_scale) return &p;
  }
  return nullptr;
}

SloCapacity slo_capacity(const SloCapacityQuestion& question, const configs::Catalog& catalog,
                         engine::ThreadPool* pool) {
  SloCapacity out;
  const auto round = [&](const std::vector<double>& rates) {
    std::vector<SloProbe> done(rates.size());
    const auto body = [&](std::size_t i) {
      done[i] = probe_slo(question.config, catalog, rates[i], question.requests, question.warmup, question.config_file);
    };
    if (pool != nullptr) {
      pool->for_each(rates.size(), body);
    } else {
      for (std::size_t i = 0; i < rates.size(); ++i) body(i);
    }
    std::vector<bool> met(rates.size());
    for (std::size_t i = 0; i < rates.size(); ++i) {
      if (!done[i].error.empty() && out.error.empty()) out.error = done[i].error;
      met[i] = done[i].error.empty() && done[i].judged > 0 && done[i].attainment >= question.target;
      out.probes.push_back(std::move(done[i]));
    }
    return met;
  };
  out.rate_scale = highest_meeting(question.start_rate, question.lowest_rate, question.highest_rate,
                                   question.precision, round, question.search);
  if (!out.error.empty()) out.rate_scale.reset();
  return out;
}

}  // namespace meshsim::run
