#include "sim/perf/perf_profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>


namespace meshsim::cluster {

PrefillWork ProfileRow::prefill_work() const {
  const double prompt = prompt_size;
  return PrefillWork{std::uint64_t{prompt_size} * batch_size, batch_size, prompt * prompt * batch_size};
}

DecodeWork ProfileRow::decode_work() const {
  // Context grows from prompt_size to prompt_size + token_size over the run.
  const double mean_context = prompt_size + token_size / 2.0;
  return DecodeWork{batch_size, static_cast<std::uint64_t>(std::llround(mean_context * batch_size))};
}

std::vector<ProfileRow> select_rows(const std::vector<ProfileRow>& rows, const std::string& model,
                                    const std::string& hardware, std::uint32_t tensor_parallel) {
  std::vector<ProfileRow> out;
  for (const auto& row : rows) {
    if (row.model == model && row.hardware == hardware && row.tensor_parallel == tensor_parallel) out.push_back(row);
  }
  return out;
}

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

PiecewiseLinear median_table(const std::map<double, std::vector<double>>& samples) {
  std::vector<std::pair<double, double>> points;
  for (const auto& [x, ys] : samples) points.emplace_back(x, median(ys));
  return PiecewiseLinear(std::move(points));
}

// Nelder-Mead simplex minimisation (standard coefficients), deterministic.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                                double step, int iterations) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> simplex(n + 1, start);
  for (std::size_t i = 0; i < n; ++i) simplex[i + 1][i] += step;
  std::vector<double> values(n + 1);
  for (std::size_t i = 0; i <= n; ++i) values[i] = f(simplex[i]);
  auto blend = [n](const std::vector<double>& a, const std::vector<double>& b, double t) {
    std::vector<double> out(n);
    for (std::size_t k = 0; k < n; ++k) out[k] = a[k] + t * (b[k] - a[k]);
    return out;
  };
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<std::size_t> order(n + 1);
    for (std::size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    const std::size_t best = order.front();
    const std::size_t worst = order.back();
    const std::size_t second_worst = order[n - 1];
    std::vector<double> centroid(n, 0.0);
    for (std::size_t i = 0; i <= n; ++i) {
      if (i == worst) continue;
      for (std::size_t k = 0; k < n; ++k) centroid[k] += simplex[i][k] / static_cast<double>(n);
    }
    const auto reflected = blend(centroid, simplex[worst], -1.0);
    const double fr = f(reflected);
    if (fr < values[best]) {
      const auto expanded = blend(centroid, simplex[worst], -2.0);
      const double fe = f(expanded);
      if (fe < fr) {
        simplex[worst] = expanded;
        values[worst] = fe;
      } else {
        simplex[worst] = reflected;
        values[worst] = fr;
      }
    } else if (fr < values[second_worst]) {
      simplex[worst] = reflected;
      values[worst] = fr;
    } else {
      const auto contracted = blend(centroid, simplex[worst], 0.5);
      const double fc = f(contracted);
      if (fc < values[worst]) {
        simplex[worst] = contracted;
        values[worst] = fc;
      } else {
        for (std::size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          simplex[i] = blend(simplex[best], simplex[i], 0.5);
          values[i] = f(simplex[i]);
        }
      }
    }
  }
  return simplex[static_cast<std::size_t>(std::min_element(values.begin(), values.end()) - values.begin())];
}

}  // namespace

std::vector<ProfileRow> drop_non_monotonic(const std::vector<ProfileRow>& rows, std::vector<ProfileRow>* dropped) {
  // Median prefill time per (deployment, prompt size, token size, batch size).
  using Series = std::tuple<std::string, std::string, std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<Series, std::map<std::uint32_t, std::vector<double>>> series;
  for (const auto& r : rows) {
    series[{r.model, r.hardware, r.tensor_parallel, r.prompt_size, r.token_size}][r.batch_size].push_back(
        r.prompt_time_ms);
  }
  std::map<Series, std::uint32_t> first_bad_batch;
  for (const auto& [key, by_batch] : series) {
    double slowest_so_far = 0.0;
    for (const auto& [batch, times] : by_batch) {
      const double t = median(times);
      if (t < slowest_so_far) {
        first_bad_batch[key] = batch;
        break;
      }
      slowest_so_far = t;
    }
  }
  std::vector<ProfileRow> kept;
  for (const auto& r : rows) {
    const auto it = first_bad_batch.find({r.model, r.hardware, r.tensor_parallel, r.prompt_size, r.token_size});
    if (it != first_bad_batch.end() && r.batch_size >= it->second) {
      if (dropped != nullptr) dropped->push_back(r);
    } else {
      kept.push_back(r);
    }
  }
  return kept;
}

Expected<TablePerfModel> make_table_model(const std::vector<ProfileRow>& rows) {
  std::map<double, std::vector<double>> prefill;
  std::map<double, std::vector<double>> decode;
  for (const auto& row : rows) {
    const double batch_tokens = static_cast<double>(row.prompt_size) * row.batch_size;
    prefill[batch_tokens].push_back(row.prompt_time_ms);
    decode[batch_tokens].push_back(row.token_time_ms);
  }
  if (prefill.size() < 2) return Error{"a table model needs rows at two or more batch sizes"};
  return TablePerfModel(median_table(prefill), median_table(decode));
}

ProfileError profile_error(const PerfModel& model, const std::vector<ProfileRow>& rows) {
  ProfileError error;
  for (const auto& row : rows) {
    error.prefill_mape += std::fabs(model.prefill_ms(row.prefill_work()) - row.prompt_time_ms) / row.prompt_time_ms;
    error.decode_mape += std::fabs(model.decode_ms(row.decode_work()) - row.token_time_ms) / row.token_time_ms;
  }
  error.rows = rows.size();
  if (!rows.empty()) {
    error.prefill_mape *= 100.0 / static_cast<double>(rows.size());
    error.decode_mape *= 100.0 / static_cast<double>(rows.size());
  }
  return error;
}

namespace {

// Fits three factors (in log space, so they stay positive) with the others held.
void fit_factors(RooflineFactors& factors, const std::array<double RooflineFactors::*, 3>& fields,
                 const std::function<double(const RooflineFactors&)>& error) {
  std::vector<double> start;
  for (const auto field : fields) start.push_back(std::log(factors.*field));
  const auto with = [&](const std::vector<double>& x) {
    RooflineFactors candidate = factors;
    for (std::size_t i = 0; i < fields.size(); ++i) candidate.*fields[i] = std::exp(x[i]);
    return candidate;
  };
  factors = with(nelder_mead([&](const std::vector<double>& x) { return error(with(x)); }, start, 0.5, 600));
}

}  // namespace

RooflineFactors fit_roofline(const ModelSpec& model, const SkuSpec& sku, std::uint32_t tensor_parallel,
                             const std::vector<ProfileRow>& rows) {
  RooflineFactors factors;
  auto evaluate = [&](const RooflineFactors& candidate) {
    return profile_error(RooflinePerfModel(model, sku, tensor_parallel, candidate), rows);
  };
  // Prefill and decode factors are independent: fit them separately (smaller simplices).
  fit_factors(factors,
              {&RooflineFactors::prefill_overhead_ms, &RooflineFactors::prefill_efficiency,
               &RooflineFactors::prefill_knee_tokens},
              [&](const RooflineFactors& c) { return evaluate(c).prefill_mape; });
  fit_factors(factors,
              {&RooflineFactors::decode_overhead_ms, &RooflineFactors::decode_memory_efficiency,
               &RooflineFactors::decode_compute_efficiency},
              [&](const RooflineFactors& c) { return evaluate(c).decode_mape; });
  return factors;
}

}  // namespace meshsim::cluster
