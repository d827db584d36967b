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
// short episodes, and its workload generated for two hours.
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
  f.requests = *traces::load_trace(**source);
  f.workload = traces::in_memory(f.requests);
  return f;
}

}  // namespace meshsim::rl
