#include "rl/ppo/lagrangian.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::rl {

double next_lagrange(const configs::PpoSpec& opt, double slo_target, double lagrange, const IterationStats& stats) {
  if (!(opt.lagrange_rate > 0) || stats.requests == 0) return lagrange;
  const double allowed = std::max(1e-9, 1.0 - slo_target);
  const double violation = std::clamp((slo_target - stats.slo_attainment) / allowed, -1.0, 1.0);
  return std::clamp(lagrange * std::exp(opt.lagrange_rate * violation), opt.lagrange_min, opt.lagrange_max);
}

}  // namespace meshsim::rl
