#include "tools/runs/replay_to_end.hpp"

#include <chrono>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/engine/check.hpp"
#include "tools/runs/deployment_report.hpp"
#include "tools/runs/run_outputs.hpp"

namespace meshsim::cli {

Expected<FinishedReplay> replay_to_end(const configs::ScenarioConfig& config, const std::string& config_path,
                                       const configs::Catalog& catalog, replay::ReplayObserver& observer,
                                       run::RunHooks hooks,
                                       const std::function<void(const run::ScenarioRun&)>& on_created) {
  const auto wall_start = std::chrono::steady_clock::now();
  const nlohmann::json borrowed = configs::borrowed_roofline_factors(config.serving, catalog);
  if (!borrowed.is_null()) observer.on_warning(borrowed["note"].get<std::string>());
  auto run = run::ScenarioRun::create(config, config_path, catalog, observer, std::move(hooks));
  if (!run) return run.error();
  FinishedReplay out;
  out.run = std::move(*run);
  if (on_created) on_created(*out.run);
  try {
    out.run->start();
    if (auto ran = out.run->advance_until(config.replay.until.value_or(engine::SimTime::max())); !ran) {
      return ran.error();
    }
    auto result = out.run->finish();
    if (!result) return result.error();
    out.result = *result;
  } catch (const RangeError& e) {
    return Error{config_path + ": " + e.what()};
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const replay::Replay& replay = out.run->replay();
  out.summary = make_summary(configs::to_json(config), config.seed, out.run->workload_description(), out.result,
                             replay.metrics(), scaling_summary(*out.run, out.result),
                             batch_summary(*out.run, out.result), borrowed,
                             out.run->llm() != nullptr ? deployment_json(out.run->llm()->config()) : nullptr);
  return out;
}

}  // namespace meshsim::cli
