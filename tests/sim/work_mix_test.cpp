// The work features (sim/autoscale/work_mix.hpp: the observation's and capacity-units
// target tracking's) against a slow twin that keeps every event and recomputes each
// figure from scratch.
#include "sim/autoscale/work_mix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/engine/rng.hpp"

namespace meshsim::autoscale {
namespace {

using engine::SimTime;

struct Event {
  SimTime at;
  std::uint32_t tokens;
};

// The slow twin: every figure over the events in [now - window, now].
WorkMix::Figures slow_figures(const std::vector<Event>& arrivals, const std::vector<Event>& completions, SimTime now,
                              double window_s) {
  WorkMix::Figures f;
  const SimTime since = now - SimTime::from_seconds(window_s);
  const auto lengths = [&](const std::vector<Event>& events) {
    std::vector<double> out;
    for (const Event& e : events) {
      if (e.at >= since && e.at <= now) out.push_back(e.tokens);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  // The smallest value with at least 90% of the values at or below it.
  const auto p90 = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : v[static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size()))) - 1];
  };
  const auto prompts = lengths(arrivals), outputs = lengths(completions);
  f.prompt_mean = mean(prompts);
  f.prompt_p90 = p90(prompts);
  f.output_mean = mean(outputs);
  f.output_p90 = p90(outputs);
  // Arrivals per whole second over the last min(window, now) whole seconds, their
  // variance over their mean taken in two passes.
  const std::int64_t now_second = now.us() / 1'000'000;
  const std::int64_t first = now_second - std::min<std::int64_t>(static_cast<std::int64_t>(window_s), now_second);
  std::vector<double> counts(static_cast<std::size_t>(now_second - first), 0.0);
  for (const Event& e : arrivals) {
    const std::int64_t s = e.at.us() / 1'000'000;
    if (s >= first && s < now_second) counts[static_cast<std::size_t>(s - first)] += 1;
  }
  const double m = mean(counts);
  if (m > 0) {
    double deviations = 0;
    for (const double c : counts) deviations += (c - m) * (c - m);
    f.burstiness = deviations / static_cast<double>(counts.size()) / m;
  }
  return f;
}

TEST(WorkMixTest, FiguresMatchASlowTwinOverRandomStreams) {
  engine::Rng rng(57);
  for (int trial = 0; trial < 40; ++trial) {
    WorkMix mix;
    std::vector<Event> arrivals, completions;
    SimTime now;
    // Bursts and lulls: rates from 0 to 200/s, lengths over four orders of magnitude.
    const double rate = trial % 5 == 0 ? 0.02 : rng.uniform() * 200;
    for (int query = 0; query < 30; ++query) {
      // Mostly a minute or less between queries; some within the same second, some after
      // a lull longer than the longest window (everything counted leaves it).
      const double pick = rng.uniform();
      const double gap_s =
          pick < 0.1 ? rng.uniform() * 0.9 : pick < 0.2 ? 250 + rng.uniform() * 500 : 1 + rng.uniform() * 60;
      const SimTime until = now + SimTime::from_seconds(gap_s);
      SimTime t = now;
      while (rate > 0) {
        const double burst = rng.uniform() < 0.1 ? 20.0 : 1.0;
        t += SimTime::from_us(1 + static_cast<std::int64_t>(-std::log(1 - rng.uniform()) / (rate * burst) * 1e6));
        if (t > until) break;
        const auto prompt = static_cast<std::uint32_t>(1 + std::exp(rng.uniform() * 9));
        mix.on_arrival(t, prompt);
        arrivals.push_back({t, prompt});
        if (rng.uniform() < 0.8) {
          const auto output = static_cast<std::uint32_t>(1 + std::exp(rng.uniform() * 7));
          mix.on_completion(t, output);
          completions.push_back({t, output});
        }
      }
      now = until;
      const auto got = mix.figures(now);
      for (std::size_t w = 0; w < WorkMix::kWindowsS.size(); ++w) {
        const WorkMix::Figures want = slow_figures(arrivals, completions, now, WorkMix::kWindowsS[w]);
        const std::string where = "trial " + std::to_string(trial) + ", query " + std::to_string(query) + ", window " +
                                  std::to_string(w);
        EXPECT_NEAR(got[w].prompt_mean, want.prompt_mean, 1e-6 * (1 + want.prompt_mean)) << where;
        EXPECT_NEAR(got[w].output_mean, want.output_mean, 1e-6 * (1 + want.output_mean)) << where;
        // Percentiles to their bins' width (25%: within 12% of the bin's middle).
        EXPECT_NEAR(got[w].prompt_p90, want.prompt_p90, 0.13 * want.prompt_p90 + 1.2) << where;
        EXPECT_NEAR(got[w].output_p90, want.output_p90, 0.13 * want.output_p90 + 1.2) << where;
        EXPECT_NEAR(got[w].burstiness, want.burstiness, 1e-9 * (1 + want.burstiness)) << where;
      }
    }
  }
}

// Arrivals handed in out of order (seconds or minutes late) still count in the seconds
// they belong to, and those older than the ring in none (one once landed in the slot of a
// newer second sharing its place in the ring); the running sums stay the ring's.
TEST(WorkMixTest, LateArrivalsCountInTheirOwnSeconds) {
  engine::Rng rng(91);
  for (int trial = 0; trial < 20; ++trial) {
    WorkMix mix;
    std::vector<Event> arrivals;
    SimTime newest;
    for (int query = 0; query < 30; ++query) {
      for (int k = 0; k < 40; ++k) {
        newest += SimTime::from_seconds(rng.uniform() * 2);
        const double late_s = rng.uniform() < 0.2 ? rng.uniform() * (rng.uniform() < 0.1 ? 900 : 20) : 0;
        const SimTime at = std::max(SimTime(), newest - SimTime::from_seconds(late_s));
        mix.on_arrival(at, 100);
        // The twin keeps what arrives while its second can still be in a window (the
        // longest window, and the second under way).
        const std::int64_t age_s = newest.us() / 1'000'000 - at.us() / 1'000'000;
        if (age_s <= static_cast<std::int64_t>(WorkMix::kWindowsS[1])) arrivals.push_back({at, 100});
      }
      const SimTime now = newest + SimTime::from_seconds(rng.uniform() * 5);
      const auto got = mix.figures(now);
      for (std::size_t w = 0; w < WorkMix::kWindowsS.size(); ++w) {
        const WorkMix::Figures want = slow_figures(arrivals, {}, now, WorkMix::kWindowsS[w]);
        EXPECT_NEAR(got[w].burstiness, want.burstiness, 1e-9 * (1 + want.burstiness))
            << "trial " << trial << ", query " << query << ", window " << w;
      }
      newest = now;
    }
  }
}

TEST(WorkMixTest, PoissonArrivalsHaveADispersionNearOneAndBurstsAbove) {
  engine::Rng rng(3);
  const auto dispersion = [&](double burst_share) {
    WorkMix mix;
    SimTime t;
    while (t < SimTime::from_seconds(300)) {
      const double rate = rng.uniform() < burst_share ? 200.0 : 20.0;
      t += SimTime::from_us(1 + static_cast<std::int64_t>(-std::log(1 - rng.uniform()) / rate * 1e6));
      mix.on_arrival(t, 100);
    }
    return mix.figures(SimTime::from_seconds(300))[1].burstiness;
  };
  EXPECT_NEAR(dispersion(0.0), 1.0, 0.25);
  EXPECT_GT(dispersion(0.3), 1.5);
}

}  // namespace
}  // namespace meshsim::autoscale
