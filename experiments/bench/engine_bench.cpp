// Hold-model benchmark of the event engine (pop the earliest event, schedule one new
// event at now + an exponential delay), against a bare std::priority_queue loop over the
// same 40-byte events in the same run. The target is >= 70% of the bare loop's rate at
// 1k and 100k pending events; the ratio is printed at the end.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "experiments/bench/bench_reporter.hpp"
#include "sim/engine/simulation.hpp"

namespace {

using meshsim::engine::EventHandler;
using meshsim::engine::EventPayload;
using meshsim::engine::Rng;
using meshsim::engine::SimTime;
using meshsim::engine::Simulation;

// Delays drawn once, so both loops pay the same (zero) cost for randomness.
std::vector<std::int64_t> make_delays() {
  Rng rng(7);
  std::vector<std::int64_t> delays(1 << 16);
  for (auto& d : delays) d = 1 + static_cast<std::int64_t>(rng.exponential(1.0 / 1000.0));
  return delays;
}
const std::vector<std::int64_t> kDelays = make_delays();
constexpr std::size_t kDelayMask = (1 << 16) - 1;

class HoldHandler final : public EventHandler {
 public:
  explicit HoldHandler(Simulation& sim) : sim_(sim) {}
  void on_event(const EventPayload& payload) override {
    sim_.schedule_after(SimTime::from_us(kDelays[next_++ & kDelayMask]), *this, payload);
  }
  std::size_t next_ = 0;

 private:
  Simulation& sim_;
};

void BM_HoldEngine(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Simulation sim(1);
  HoldHandler handler(sim);
  for (std::size_t i = 0; i < pending; ++i) {
    sim.schedule_at(SimTime::from_us(kDelays[i & kDelayMask]), handler, EventPayload{i, 0});
  }
  for (auto _ : state) sim.step();
  state.SetItemsProcessed(state.iterations());
}

struct BareEvent {
  std::int64_t time;
  std::uint64_t sequence;
  void* target;
  EventPayload payload;
};
struct Later {
  bool operator()(const BareEvent& x, const BareEvent& y) const {
    return x.time > y.time || (x.time == y.time && x.sequence > y.sequence);
  }
};

void BM_HoldPriorityQueue(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  std::priority_queue<BareEvent, std::vector<BareEvent>, Later> queue;
  std::uint64_t sequence = 0;
  for (std::size_t i = 0; i < pending; ++i) {
    queue.push(BareEvent{kDelays[i & kDelayMask], sequence++, nullptr, EventPayload{i, 0}});
  }
  std::size_t next = 0;
  for (auto _ : state) {
    const BareEvent event = queue.top();
    queue.pop();
    queue.push(BareEvent{event.time + kDelays[next++ & kDelayMask], sequence++, event.target, event.payload});
  }
  benchmark::DoNotOptimize(queue.top());
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_HoldEngine)->Arg(1000)->Arg(100000);
BENCHMARK(BM_HoldPriorityQueue)->Arg(1000)->Arg(100000);

// Collects events/s per benchmark to print the engine / bare-loop ratio.
class RatioReporter : public meshsim::bench::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      const auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) rates_[run.benchmark_name()] = it->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const char* pending : {"1000", "100000"}) {
      const auto engine = rates_.find(std::string("BM_HoldEngine/") + pending);
      const auto bare = rates_.find(std::string("BM_HoldPriorityQueue/") + pending);
      if (engine == rates_.end() || bare == rates_.end()) continue;
      std::printf("hold model, %s pending: engine %.1f M events/s, std::priority_queue %.1f M events/s, ratio %.2f (target >= 0.70)\n",
                  pending, engine->second / 1e6, bare->second / 1e6, engine->second / bare->second);
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  RatioReporter reporter;
  return meshsim::bench::run_benchmarks(argc, argv, &reporter);
}
