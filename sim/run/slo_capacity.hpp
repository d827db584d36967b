#pragma once

// What a deployment sustains at its SLO, measured: the one home of "the largest arrival
// rate at which n instances meet the SLO target" on a workload's own requests (their
// lengths and burstiness), found by replaying them at rate scales and searching. Both
// `meshsim capacity --find rate` and the evaluation's right-sizing bound
// (rl/env/bound_plays.hpp) ask it.
//
// Each probe replays the requests at one rate scale on a static deployment (no
// autoscaler) until every request has left, or to the scenario's `replay.until` when it
// sets one; a request is judged by the scenario's SLO (TTFT and TBT as it defines them):
// one still in the system when the run stops is a miss when it already is one (past its
// TTFT target without a first token, as a backlog left behind is: no capacity) and not
// judged otherwise (its outcome unknown), one refused for its length is not judged, and
// those arriving in the warm-up (the deployment starting empty, an easier start than any
// later moment) are served but not judged.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/run/capacity_search.hpp"
#include "sim/engine/thread_pool.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::run {

// The requests a probe replays at `rate_scale`, opened afresh for each probe. Empty: the
// scenario's own workload with its rate scale set to `rate_scale`.
using ProbeRequests = std::function<std::unique_ptr<traces::RequestSource>(double rate_scale)>;

// One replay of the search.
struct SloProbe {
  double rate_scale = 0;
  std::string error;  // the replay failed: nothing else is set
  std::uint64_t arrived = 0;
  std::uint64_t judged = 0;        // after the warm-up, within the context, their outcome known
  std::uint64_t met = 0;           // of those judged
  std::uint64_t unfinished = 0;    // judged misses still in the system at the end (late already)
  std::uint64_t over_context = 0;  // refused for their length (not judged)
  std::uint64_t other_drops = 0;
  double attainment = 0;           // met / judged (0 when nothing was judged)
  double offered_per_s = 0;        // arrivals per second up to the last arrival
  double goodput_per_s = 0;        // requests meeting the SLO per second, over the same span
  double ttft_p50_s = 0, ttft_p99_s = 0, tbt_p99_s = 0, e2e_p50_s = 0;
  double gpu_hours = 0, cost_usd = 0;
  bool overloaded = false;  // the replay's own verdict
};

// Replays `config` (its deployment as given: the caller sets the start state's sizes) at
// `rate_scale`, its autoscaler off. `warmup` is measured at rate scale 1 (the requests of
// the workload's first `warmup` are served, not judged, at any rate: the same requests).
// Errors name `config_file` (empty: the scenario's name).
SloProbe probe_slo(const configs::ScenarioConfig& config, const configs::Catalog& catalog, double rate_scale,
                   const ProbeRequests& requests = {}, engine::SimTime warmup = engine::SimTime::zero(),
                   const std::string& config_file = {});

struct SloCapacityQuestion {
  configs::ScenarioConfig config;  // the deployment, sized; its SLO
  ProbeRequests requests;          // empty: the scenario's workload
  double target = 0.99;            // the attainment to meet
  double start_rate = 1.0;         // where the search starts; it doubles or halves from there
  double lowest_rate = 1e-3, highest_rate = 1e3;
  double precision = 0.02;  // the answer within a factor of 1 + precision
  engine::SimTime warmup = engine::SimTime::zero();  // at rate scale 1, as probe_slo's
  RateSearch search;        // one probe a round where no pool runs them
  std::string config_file;  // errors name it (empty: the scenario's name)
};

struct SloCapacity {
  std::optional<double> rate_scale;  // the highest meeting; none when even the lowest misses
  std::vector<SloProbe> probes;      // every replay, in the order asked
  std::string error;                 // the first replay that failed
  // The probe at the answer (null when none).
  const SloProbe* at_answer() const;
};

// Searches rate scales (run/capacity_search.hpp's highest_meeting): each round's probes on
// `pool` when given (their results do not depend on the threads), else one by one.
SloCapacity slo_capacity(const SloCapacityQuestion& question, const configs::Catalog& catalog,
                         engine::ThreadPool* pool = nullptr);

}  // namespace meshsim::run
