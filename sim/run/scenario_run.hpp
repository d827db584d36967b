#pragma once

#include <memory>
#include <string>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "sim/autoscale/scaling_harness.hpp"
#include "sim/replay/replay.hpp"

namespace meshsim::cluster {
class LlmCluster;  // sim/cluster/llm_cluster.hpp: whoever reads llm() includes it
}
namespace meshsim::shared {
class SharedCluster;  // sim/shared/shared_cluster.hpp: whoever reads shared() includes it
}

namespace meshsim::run {

// What a driver may attach to a run (all optional).
struct RunHooks {
  cluster::ActivitySink* timeline = nullptr;            // instance and request activity
  cluster::ScalingManager::LogSink scaling_log;         // the ScalingManager's lines
  // Requests from here instead of the config's workload (the RL environment's window of a
  // trace held in memory).
  std::unique_ptr<traces::RequestSource> source;
  // The driver scales itself through scaling()->manager() (the RL agent): a ScalingManager
  // without the config's autoscaler.
  bool driver_scales = false;
  // The oracle autoscaler's look-ahead copy of `source` (otherwise it reopens the
  // config's workload).
  std::unique_ptr<traces::RequestSource> lookahead;
};

// A scenario config made into a world ready to run: the simulation, the workload, the
// replay, and as the config asks the shared cluster (fixed nodes, batch jobs, the
// scheduling core) and the scaling manager with its autoscaler. `meshsim replay`,
// `meshsim compare-presets` and the RL environment drive this one loop: start(), then
// advance_until() as often as they like, then finish().
class ScenarioRun {
 public:
  // Errors in the deployment or the cluster name `config_file`; the workload's name its
  // trace file.
  static Expected<std::unique_ptr<ScenarioRun>> create(const configs::ScenarioConfig& config,
                                                       const std::string& config_file, const configs::Catalog& catalog,
                                                       replay::ReplayObserver& observer, RunHooks hooks = {});
  // What create() refuses in the config and its catalog before it builds anything (the
  // deployment's hardware, model and parallelism; the error names no file), so a sweep can
  // refuse a run its catalog cannot serve before the first run starts.
  static Status check(const configs::ScenarioConfig& config, const configs::Catalog& catalog);

  ~ScenarioRun();

  void start();
  // The workload's error once its source has failed (the run is then over).
  [[nodiscard]] Status advance_until(engine::SimTime time) { return replay_->advance_until(time); }
  bool done() const { return replay_->done(); }
  // Ends the run; a shared cluster's invariants are checked here (a broken one aborts).
  Expected<replay::ReplayResult> finish();

  const replay::Replay& replay() const { return *replay_; }
  const autoscale::ScalingHarness* scaling() const { return scaling_.get(); }
  autoscale::ScalingHarness* scaling() { return scaling_.get(); }
  engine::SimTime now() const { return sim_.now(); }
  const shared::SharedCluster* shared() const { return shared_.get(); }
  // The LLM serving model, when the scenario serves with one (null for fixed latency).
  const cluster::LlmCluster* llm() const { return llm_; }
  const std::string& workload_description() const { return workload_; }

 private:
  ScenarioRun(std::uint64_t seed, replay::ReplayObserver& observer);

  // What the replay reports goes to the driver's observer and, for the requests
  // themselves, to an autoscaler that watches them (one sizing on their work).
  class Observers final : public replay::ReplayObserver {
   public:
    explicit Observers(replay::ReplayObserver& driver) : driver_(driver) {}
    void set_watcher(replay::ReplayObserver* watcher) { watcher_ = watcher; }
    void on_arrival(const traces::TraceRequest& request) override;
    void on_request(const metrics::RequestRecord& record) override;
    void on_interval(const metrics::TimeseriesRow& row) override { driver_.on_interval(row); }
    void on_progress(double fraction, engine::SimTime now) override { driver_.on_progress(fraction, now); }
    void on_warning(const std::string& message) override { driver_.on_warning(message); }

   private:
    replay::ReplayObserver& driver_;
    replay::ReplayObserver* watcher_ = nullptr;
  };

  engine::Simulation sim_;
  Observers observers_;
  std::unique_ptr<traces::RequestSource> source_;
  std::unique_ptr<replay::Replay> replay_;
  cluster::LlmCluster* llm_ = nullptr;  // the replay's serving system, when it is the llm model
  std::unique_ptr<shared::SharedCluster> shared_;
  std::unique_ptr<autoscale::ScalingHarness> scaling_;
  std::string workload_;
};

}  // namespace meshsim::run
