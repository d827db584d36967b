#pragma once

#include <cstddef>
#include <vector>

#include "sim/perf/hardware.hpp"
#include "sim/perf/step_time_model.hpp"

namespace meshsim::cluster {

// A request-level measurement of one server under a steady load it kept up with: requests
// of `prompt_tokens` (the first `cached_tokens` of them found in the prefix cache) and
// `output_tokens` arriving at `rate_per_s`, and the mean E2E and TTFT measured.
struct SteadyLoad {
  ModelSpec model;
  SkuSpec sku;
  std::uint32_t tensor_parallel = 1;
  double rate_per_s = 0;
  double prompt_tokens = 0;
  double cached_tokens = 0;
  double output_tokens = 0;
  double e2e_mean_s = 0;
  double ttft_mean_s = 0;
  // Whether the TTFT equation describes the load: a closed loop's clients send in waves
  // whose prompts queue behind each other, which the equation's mean step does not see;
  // its TTFT is then judged by replaying it, not fitted.
  bool fit_first_token = true;
};

// How a load's two measured figures come out of the coefficients: the mean step (mean
// time between tokens) and TTFT - half a step (waiting for the running step) are each
// linear in them. Little's law turns the measurements into the steps' contents: decodes
// running = rate * (E2E - TTFT), each at its mean context; prefills per step = rate *
// step. Columns: the step terms, then pre_queue_ms and pre_queue_us_per_prompt_token.
struct LoadEquations {
  static constexpr std::size_t kColumns = kStepTermCount + 2;
  std::array<double, kColumns> step{};   // . coefficients = mean step, s
  std::array<double, kColumns> first{};  // . coefficients = TTFT - step / 2, s
  double step_s = 0;                     // measured
  double first_s = 0;                    // measured
};
LoadEquations load_equations(const SteadyLoad& load);

// The coefficients' predictions for a load's mean step and TTFT.
struct LoadPrediction {
  double step_s = 0, ttft_s = 0;
};
LoadPrediction predict(const StepCoefficients& c, const SteadyLoad& load);

// Fits step-time coefficients (bounded least squares on relative errors, each load's step
// and TTFT equations weighted alike): a roofline term's coefficient is at least 1 (no
// faster than the hardware's peak), an overhead's at least 0. With three or more
// deployments, terms are first selected by backward elimination on the
// leave-one-deployment-out error (a term left out stays at its bound).
// Precondition: at least one load.
StepCoefficients fit_step_coefficients(const std::vector<SteadyLoad>& loads);

// min |A x - b| subject to x >= 0 (Lawson and Hanson's active-set method), A row-major
// with `columns` columns.
std::vector<double> nonnegative_least_squares(const std::vector<double>& a, std::size_t columns,
                                              const std::vector<double>& b);

}  // namespace meshsim::cluster
