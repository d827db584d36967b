// How costs grow: each benchmark runs at n and 2n, and the reporter prints the time ratio
// per family against a bound of 2.3 (linear or n log n, with room for noise), exiting 1
// when one is over. Each family was quadratic once (issue 47):
//  - BM_TimeoutsUnderOverload: one Llama2-7B instance under 200 and 400 req/s with a 30 s
//    request timeout (every time-out rewrote vLLM's waiting queue: 4x per doubling);
//  - BM_ScriptSteps: a script of 20,000 and 40,000 submit/advance steps (the JSON parser
//    with a depth callback rescanned the step list at each step's end);
//  - BM_DrainInstances: scale_down_full on 10,000 and 20,000 instances, one by one (each
//    scanned the pool for its least loaded instance).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "configs/overrides.hpp"
#include "configs/scenario_config.hpp"
#include "experiments/bench/bench_reporter.hpp"
#include "experiments/bench/scenario_replay.hpp"
#include "configs/config_file.hpp"
#include "sim/script/script_session.hpp"

namespace meshsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kBound = 2.3;

void BM_TimeoutsUnderOverload(benchmark::State& state) {
  const auto rate = static_cast<double>(state.range(0));
  json generator = json::parse(std::ifstream(configs::default_catalog_folder() + "/workloads/azure_conv.json"));
  generator.erase("comment");
  generator["arrivals"] = {{"kind", "poisson"}, {"rate_per_s", rate}};
  generator["requests"] = static_cast<std::uint64_t>(rate * 150);
  const std::vector<configs::Override> overrides = {
      {"serving.model", "llama2-7b"},
      {"serving.tensor_parallel", 1},
      {"serving.start_state", json::parse(R"([{"tag": "mixed", "count": 1}])")},
      {"serving.vllm.request_timeout_s", 30},
      {"workload", {{"generator", generator}, {"rate_scale", 1.0}}}};
  auto config = configs::load_scenario_with("", overrides);
  if (!config) throw std::runtime_error(config.error().message);
  bench::replay_scenario_to_end(state, *config);
}

// Plays `script` (written to a file first, so parsing is timed too) through the scenario
// interpreter `meshsim scenario` runs (sim/script): read, checked, every step parsed, then
// run, each result line serialised as the command prints it.
void play(benchmark::State& state, const json& script, const std::string& name) {
  const fs::path file = fs::temp_directory_path() / ("meshsim-growth-" + name + ".json");
  std::ofstream(file) << script.dump();
  for (auto _ : state) {
    auto read = configs::read_config_file(file.string());
    if (!read) throw std::runtime_error(read.error().message);
    json setup = json::object();
    for (const char* key : {"nodes", "serving", "scaling"}) {
      if (read->contains(key)) setup[key] = (*read)[key];
    }
    auto session = script::ScriptSession::create(setup, file.string(), nullptr);
    if (!session) throw std::runtime_error(session.error().message);
    const json& steps = (*read)["steps"];
    std::vector<script::ScriptSession::Step> parsed;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      auto step = (*session)->parse(i, steps[i], "steps[" + std::to_string(i) + "]");
      if (!step) throw std::runtime_error(step.error().message);
      parsed.push_back(std::move(*step));
    }
    std::size_t printed = 0;
    for (auto& step : parsed) printed += step.run().dump().size();
    benchmark::DoNotOptimize(printed);
  }
  fs::remove(file);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The serving part of the drain script (seed 003's E2 setting: constant iteration times).
json serving_script(std::int64_t instances) {
  return {{"serving",
           {{"model", "llama2-70b"}, {"sku", "h100-80gb"}, {"tensor_parallel", 8}, {"backend", "constant"},
            {"constant", {{"prefill_ms", 10}, {"decode_ms", 20}}},
            {"start_state", json::array({{{"tag", "mixed"}, {"count", instances}}})},
            {"kv", {{"capacity_tokens", 1000000}}}}},
          {"scaling", {{"scale_up_delay_s", 10}, {"drain_check_interval_s", 1}, {"drain_timeout_s", 30},
                       {"max_total_instances", 100000}}}};
}

void BM_ScriptSteps(benchmark::State& state) {
  json script = serving_script(2);
  json& steps = script["steps"] = json::array();
  for (std::int64_t i = 0; i < state.range(0) / 2; ++i) {
    steps.push_back({{"call", "submit_requests"}, {"args", {{"prompt_tokens", 100}, {"output_tokens", 5}}}});
    steps.push_back({{"call", "advance"}, {"args", {{"seconds", 0.01}}}});
  }
  play(state, script, "steps");
}

void BM_DrainInstances(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  json script = serving_script(n);
  json& steps = script["steps"] = json::array();
  steps.push_back({{"call", "submit_requests"}, {"args", {{"count", n}, {"prompt_tokens", 100}, {"output_tokens", 500}}}});
  for (std::int64_t i = 1; i < n; ++i) steps.push_back({{"call", "scale_down_full"}, {"args", {{"tag", "mixed"}}}});
  steps.push_back({{"call", "advance"}, {"args", {{"seconds", 60}}}});
  play(state, script, "drain");
}

BENCHMARK(BM_TimeoutsUnderOverload)->Arg(200)->Arg(400)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScriptSteps)->Arg(20'000)->Arg(40'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DrainInstances)->Arg(10'000)->Arg(20'000)->Unit(benchmark::kMillisecond);

// Time per run of each benchmark at n and 2n, then the ratio per family.
class GrowthReporter : public bench::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      const std::string name = run.benchmark_name();
      const auto slash = name.find('/');
      times_[name.substr(0, slash)][std::stoll(name.substr(slash + 1))] = run.GetAdjustedRealTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (const auto& [family, by_size] : times_) {
      if (by_size.size() != 2) continue;
      const auto& [n, small] = *by_size.begin();
      const auto& [twice, large] = *by_size.rbegin();
      const double ratio = large / small;
      over_ |= ratio > kBound;
      std::printf("growth %s: %lld -> %lld takes %.2fx the time (bound %.1f)%s\n", family.c_str(),
                  static_cast<long long>(n), static_cast<long long>(twice), ratio, kBound,
                  ratio > kBound ? "  OVER" : "");
    }
  }
  bool over() const { return over_; }

 private:
  std::map<std::string, std::map<long long, double>> times_;
  bool over_ = false;
};

}  // namespace
}  // namespace meshsim

int main(int argc, char** argv) {
  meshsim::GrowthReporter reporter;
  const int code = meshsim::bench::run_benchmarks(argc, argv, &reporter);
  return code != 0 ? code : reporter.over() ? 1 : 0;
}
