#pragma once

// The environments' test setup shared by the rl tests.
#include "rl/env/scaling_env.hpp"
#include "traces/episode_workload.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::rl {

inline const configs::Catalog& catalog() {
  static const configs::Catalog loaded = *configs::load_catalog(configs::default_catalog_folder());
  return loaded;
}

// The bundled default scenario (Azure-fitted generator, Llama2-70B TP4, mixed pool) with
// short episodes, and its workload generated for two hours, less the requests longer
// than the model's context.
struct Fixture {
  configs::ScenarioConfig config;
  traces::SharedTrace requests;      // the workload's requests, to check against
  traces::SharedWorkload workload;  // the same, as the environments replay it
};

inline Fixture make_fixture(double episode_s = 600, double interval_s = 15) {
  Fixture f;
  f.config = *configs::load_scenario(configs::default_scenario_path());
  f.config.workload.window_end = SimTime::from_seconds(7200);
  configs::RlSpec rl;
  rl.episode_length = SimTime::from_seconds(episode_s);
  rl.decision_interval = SimTime::from_seconds(interval_s);
  f.config.rl = rl;
  auto source = traces::open_workload(f.config.workload, f.config.seed);
  // Only requests the model's context holds: every arrival reaches a pool (vLLM refuses
  // the longer ones at once; the environments' counts are checked without them).
  const auto& serving = std::get<configs::LlmServingSpec>(f.config.serving);
  const std::uint64_t context = catalog().find_model(serving.model)->max_context_tokens;
  auto fitting = std::make_shared<std::vector<traces::TraceRequest>>();
  const traces::SharedTrace all = *traces::load_trace(**source);
  for (const auto& r : *all) {
    if (std::uint64_t{r.prompt_tokens} + r.output_tokens <= context) fitting->push_back(r);
  }
  f.requests = std::move(fitting);
  f.workload = traces::in_memory(f.requests);
  return f;
}

}  // namespace meshsim::rl
