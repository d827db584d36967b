#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "configs/catalog.hpp"
#include "sim/run/scenario_run.hpp"

namespace meshsim::cli {

// A scenario replayed from its start to its end (or its replay.until), its requests and
// intervals streamed to an observer on the way: what `meshsim replay`, `meshsim sweep`
// and meshsim.replay (Python) share.
struct FinishedReplay {
  std::unique_ptr<run::ScenarioRun> run;  // kept for what the caller prints or exports
  replay::ReplayResult result;
  nlohmann::ordered_json summary;  // summary.json
  double wall_s = 0;
};

// Errors (a config the world cannot be built from, a value out of range mid-run) name
// `config_path`. `on_created` sees the run before it starts (what live metrics read).
Expected<FinishedReplay> replay_to_end(const configs::ScenarioConfig& config, const std::string& config_path,
                                       const configs::Catalog& catalog, replay::ReplayObserver& observer,
                                       run::RunHooks hooks = {},
                                       const std::function<void(const run::ScenarioRun&)>& on_created = {});

}  // namespace meshsim::cli
