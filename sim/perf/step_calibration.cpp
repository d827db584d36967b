#include "sim/perf/step_calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {
namespace {

using Columns = std::array<double, LoadEquations::kColumns>;

Columns with_request_terms(const StepFeatures& step, double pre_queue_ms, double prompt_tokens) {
  Columns out{};
  std::copy(step.begin(), step.end(), out.begin());
  out[kStepTermCount] = pre_queue_ms * 1e-3;
  out[kStepTermCount + 1] = prompt_tokens * 1e-6;
  return out;
}

Columns coefficient_columns(const StepCoefficients& c) {
  Columns out{};
  std::copy(c.step.begin(), c.step.end(), out.begin());
  out[kStepTermCount] = c.request.pre_queue_ms;
  out[kStepTermCount + 1] = c.request.pre_queue_us_per_prompt_token;
  return out;
}

double dot(const Columns& a, const Columns& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

LoadEquations load_equations(const SteadyLoad& load) {
  LoadEquations eq;
  const double gaps = std::max(1.0, load.output_tokens - 1.0);
  const double decode_s = std::max(0.0, load.e2e_mean_s - load.ttft_mean_s);
  eq.step_s = decode_s / gaps;
  eq.first_s = load.ttft_mean_s - eq.step_s / 2;
  const double running = load.rate_per_s * decode_s;
  const double context = running * (load.prompt_tokens + load.output_tokens / 2);
  const double fresh = std::max(0.0, load.prompt_tokens - load.cached_tokens);
  const double squared = load.prompt_tokens * load.prompt_tokens - load.cached_tokens * load.cached_tokens;
  // The mean step: the decodes, and the prompts arriving during one step, p on average:
  // whole prompts, so floor(p) or floor(p) + 1 of them, mixed to the mean (a step's
  // unhidden compute is not linear in its contents, so the mean of steps is not the step
  // of the means).
  const auto with_prefills = [&](double k) {
    return step_features(load.model, load.sku, load.tensor_parallel,
                         StepContents{k * fresh, k, k * squared, k * load.cached_tokens, running, context});
  };
  const double prefills = load.rate_per_s * eq.step_s;
  const double whole = std::floor(prefills);
  const StepFeatures fewer = with_prefills(whole), more = with_prefills(whole + 1);
  StepFeatures mean_step{};
  for (std::size_t i = 0; i < kStepTermCount; ++i) {
    mean_step[i] = fewer[i] + (prefills - whole) * (more[i] - fewer[i]);
  }
  // The step a prompt is prefilled in (it fits one step's token budget in these loads).
  const StepFeatures first_step = step_features(load.model, load.sku, load.tensor_parallel,
                                                StepContents{fresh, 1, squared, load.cached_tokens, running, context});
  eq.step = with_request_terms(mean_step, 0, 0);
  eq.first = with_request_terms(first_step, 1, load.prompt_tokens);
  return eq;
}

LoadPrediction predict(const StepCoefficients& c, const SteadyLoad& load) {
  const LoadEquations eq = load_equations(load);
  const Columns x = coefficient_columns(c);
  const double step = dot(eq.step, x);
  return {step, dot(eq.first, x) + step / 2};
}

namespace {

using TermSet = std::array<bool, LoadEquations::kColumns>;

// The least each coefficient can be. A roofline term is a quantity of the step at the
// hardware's peak rate, so its coefficient is 1 / the efficiency reached: at least 1
// (a fit below it claims a GPU faster than its peak, which loads that barely exercise a
// term, e.g. short or cached prompts and the prefill FLOPs, would otherwise let it do).
// Overheads are at least 0.
Columns lower_bounds() {
  Columns low{};
  for (const StepTerm term : {StepTerm::kWeights, StepTerm::kLinearFlops, StepTerm::kKvReads,
                              StepTerm::kAttentionFlops, StepTerm::kAllReduceBytes}) {
    low[static_cast<std::size_t>(term)] = 1.0;
  }
  return low;
}

// Bounded least squares over the columns in `use` (the others stay at their bound): NNLS
// on each coefficient's excess over its bound.
Columns fit_columns(const std::vector<const SteadyLoad*>& loads, const TermSet& use) {
  const Columns low = lower_bounds();
  std::vector<std::size_t> index;
  for (std::size_t c = 0; c < use.size(); ++c) {
    if (use[c]) index.push_back(c);
  }
  std::vector<double> a, b;
  for (const auto* load : loads) {
    const LoadEquations eq = load_equations(*load);
    // Relative errors: each equation divided by its measured value.
    const double first_s = load->fit_first_token ? eq.first_s : 0.0;  // 0: not an equation of the fit
    for (const auto& [row, measured] : {std::pair{eq.step, eq.step_s}, std::pair{eq.first, first_s}}) {
      if (!(measured > 0)) continue;
      for (const std::size_t c : index) a.push_back(row[c] / measured);
      b.push_back(1.0 - dot(row, low) / measured);
    }
  }
  Columns x = low;
  if (b.empty() || index.empty()) return x;
  const auto solved = nonnegative_least_squares(a, index.size(), b);
  for (std::size_t i = 0; i < index.size(); ++i) x[index[i]] += solved[i];
  return x;
}

double abs_relative_error(const Columns& x, const SteadyLoad& load) {
  const LoadEquations eq = load_equations(load);
  const double step = dot(eq.step, x);
  double sum = 0;
  if (eq.step_s > 0) sum += std::fabs(step / eq.step_s - 1);
  if (load.ttft_mean_s > 0 && load.fit_first_token) sum += std::fabs((dot(eq.first, x) + step / 2) / load.ttft_mean_s - 1);
  return sum;
}

// Leave-one-deployment-out error of fitting `use`: each deployment (model, SKU, TP)
// predicted by a fit to the others.
double held_out_error(const std::vector<SteadyLoad>& loads, const TermSet& use) {
  const auto deployment = [](const SteadyLoad& l) { return std::tie(l.model.name, l.sku.name, l.tensor_parallel); };
  double total = 0;
  for (const auto& held : loads) {
    std::vector<const SteadyLoad*> train;
    for (const auto& l : loads) {
      if (deployment(l) != deployment(held)) train.push_back(&l);
    }
    total += abs_relative_error(fit_columns(train, use), held);
  }
  return total;
}

}  // namespace

StepCoefficients fit_step_coefficients(const std::vector<SteadyLoad>& loads) {
  MESHSIM_CHECK(!loads.empty(), "fit_step_coefficients needs loads");
  TermSet use;
  use.fill(true);
  // With several deployments, terms are dropped (held at their bound) while that lowers
  // the error on a deployment left out of the fit: a term that only one deployment pins
  // down (there is one TP degree, or one width) must not extrapolate to the others by its
  // accident.
  std::set<std::tuple<std::string, std::string, std::uint32_t>> deployments;
  for (const auto& l : loads) deployments.emplace(l.model.name, l.sku.name, l.tensor_parallel);
  if (deployments.size() >= 3) {
    double best = held_out_error(loads, use);
    for (bool improved = true; improved;) {
      improved = false;
      TermSet best_set = use;
      for (std::size_t c = 0; c < use.size(); ++c) {
        if (!use[c]) continue;
        TermSet candidate = use;
        candidate[c] = false;
        const double error = held_out_error(loads, candidate);
        if (error < best - 1e-9) {
          best = error;
          best_set = candidate;
          improved = true;
        }
      }
      use = best_set;
    }
  }
  std::vector<const SteadyLoad*> all;
  for (const auto& l : loads) all.push_back(&l);
  const Columns x = fit_columns(all, use);
  StepCoefficients c;
  std::copy(x.begin(), x.begin() + kStepTermCount, c.step.begin());
  c.request.pre_queue_ms = x[kStepTermCount];
  c.request.pre_queue_us_per_prompt_token = x[kStepTermCount + 1];
  return c;
}

std::vector<double> nonnegative_least_squares(const std::vector<double>& a_rows, std::size_t columns,
                                              const std::vector<double>& b_values) {
  const auto rows = static_cast<Eigen::Index>(b_values.size());
  const auto n = static_cast<Eigen::Index>(columns);
  MESHSIM_CHECK(a_rows.size() == b_values.size() * columns, "A must have b.size() rows of `columns`");
  Eigen::MatrixXd a(rows, n);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (Eigen::Index c = 0; c < n; ++c) a(r, c) = a_rows[static_cast<std::size_t>(r * n + c)];
  }
  const Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(b_values.data(), rows);
  // Columns scaled to unit norm so terms of very different magnitudes compete fairly.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index c = 0; c < n; ++c) {
    if (scale(c) > 0) a.col(c) /= scale(c);
  }
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double tolerance = 1e-12 * std::max<double>(1.0, static_cast<double>(rows));
  // The least-squares solution on the passive set, zero elsewhere.
  const auto solve_passive = [&]() {
    std::vector<Eigen::Index> index;
    for (Eigen::Index c = 0; c < n; ++c) {
      if (passive[static_cast<std::size_t>(c)]) index.push_back(c);
    }
    Eigen::MatrixXd sub(rows, static_cast<Eigen::Index>(index.size()));
    for (std::size_t i = 0; i < index.size(); ++i) sub.col(static_cast<Eigen::Index>(i)) = a.col(index[i]);
    const Eigen::VectorXd z_sub = sub.completeOrthogonalDecomposition().solve(b);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < index.size(); ++i) z(index[i]) = z_sub(static_cast<Eigen::Index>(i));
    return z;
  };
  // Columns that could not enter at the current x (their own solution came out
  // negative: collinear with the passive set); cleared whenever x moves.
  std::vector<bool> blocked(static_cast<std::size_t>(n), false);
  for (int outer = 0; outer < 10 * n + 50; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    for (Eigen::Index c = 0; c < n; ++c) {
      const auto i = static_cast<std::size_t>(c);
      if (!passive[i] && !blocked[i] && w(c) > tolerance && (best < 0 || w(c) > w(best))) best = c;
    }
    if (best < 0) break;  // the Karush-Kuhn-Tucker conditions hold
    passive[static_cast<std::size_t>(best)] = true;
    const Eigen::VectorXd before = x;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      const Eigen::VectorXd z = solve_passive();
      if (inner == 0 && z(best) <= 0) {
        passive[static_cast<std::size_t>(best)] = false;
        blocked[static_cast<std::size_t>(best)] = true;
        break;
      }
      bool feasible = true;
      double alpha = 1.0;
      for (Eigen::Index c = 0; c < n; ++c) {
        if (passive[static_cast<std::size_t>(c)] && z(c) <= 0) {
          feasible = false;
          alpha = std::min(alpha, x(c) / (x(c) - z(c)));
        }
      }
      if (feasible) {
        x = z;
        break;
      }
      // Step towards z until a coefficient reaches zero; it leaves the passive set.
      x += alpha * (z - x);
      for (Eigen::Index c = 0; c < n; ++c) {
        if (passive[static_cast<std::size_t>(c)] && x(c) <= 1e-15) {
          passive[static_cast<std::size_t>(c)] = false;
          x(c) = 0;
        }
      }
    }
    if (x != before) std::fill(blocked.begin(), blocked.end(), false);
  }
  std::vector<double> out(columns);
  for (Eigen::Index c = 0; c < n; ++c) out[static_cast<std::size_t>(c)] = scale(c) > 0 ? x(c) / scale(c) : 0.0;
  return out;
}

}  // namespace meshsim::cluster
