#pragma once

// The capacity model's data (sim/autoscale/capacity_model.hpp): stretches of a recipe's
// workload, each measured in the simulator (what pools of 1, 2, 4 and 8 instances
// sustain at the SLO target, rl/env/bound_plays.hpp's measure_stretch) and described by
// the work its requests bring. Training stretches come from the recipe's training span,
// validation ones from its validation spans, so a model is judged on days it never saw.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rl/env/bound_plays.hpp"
#include "sim/autoscale/capacity_model.hpp"
#include "sim/engine/expected.hpp"
#include "traces/trace_request.hpp"

namespace meshsim::rl {

// The work figures of `requests` (in arrival order) over `length_s` seconds: exact means
// and 90th percentiles, the outputs' taken from the requests themselves (a stretch's
// requests complete in it, give or take its drain), the dispersion of the arrivals per
// whole second.
autoscale::WorkFigures work_figures(std::span<const traces::TraceRequest> requests, double length_s);

// `count` distinct stretch starts, multiples of `grid_s` whose stretch lies inside one of
// `spans`, drawn with `seed` (all of them, in order, when there are no more than `count`).
std::vector<double> pick_stretches(const std::vector<configs::TimeSpan>& spans, double grid_s, std::size_t count,
                                   std::uint64_t seed);

struct CapacityLabel {
  double start_s = 0, length_s = 0;
  autoscale::WorkFigures work;
  StretchCapacity capacity;
};

// Measures the stretches starting at `starts`, side by side on `pool`; the first failed
// replay is the error.
Expected<std::vector<CapacityLabel>> label_stretches(const configs::ScenarioConfig& config,
                                                     const configs::Catalog& catalog,
                                                     const traces::SharedWorkload& workload,
                                                     const std::vector<double>& starts, double length_s,
                                                     engine::ThreadPool& pool);

// The samples a model is fitted on or judged by: one per (label, size) measured at the
// target, from labels with at least `least_requests` requests (on fewer, one miss moves
// the attainment by more than the target leaves).
std::vector<autoscale::CapacitySample> capacity_samples(const std::vector<CapacityLabel>& labels,
                                                       std::uint64_t least_requests);

}  // namespace meshsim::rl
