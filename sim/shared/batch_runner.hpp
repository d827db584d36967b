#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/scheduler.hpp"
#include "sim/cluster/serving_system.hpp"
#include "sim/shared/shared_cluster_config.hpp"
#include "sim/shared/sim_world.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/metrics/level_integral.hpp"
#include "traces/batch_jobs.hpp"

namespace meshsim::shared {

using cluster::ActivitySink;
using engine::SimTime;

// Where the batch jobs of a run are, at any moment: every arrived job is in exactly one
// of completed / running / stopping (preempted, its agent not yet stopped) / queued / failed.
struct BatchCounts {
  std::uint64_t arrived = 0, completed = 0, running = 0, stopping = 0, queued = 0, failed = 0;
  std::uint64_t starts = 0;       // a job starting or resuming
  std::uint64_t preemptions = 0;  // by serving or by higher-priority batch work
  std::uint64_t requeues = 0;     // preempted jobs put back in the queue (once their agent stopped)
  std::uint64_t hung_agents = 0;  // preemptions whose agent never answered and was killed
  // GPU-seconds of ended run segments: work kept (finished, or saved by a checkpoint) and
  // work lost to preemption (since the last checkpoint).
  double useful_gpu_s = 0.0, lost_gpu_s = 0.0;
  std::int64_t gpu_milli_running = 0;  // thousandths of GPUs held by running jobs now
  bool adds_up() const { return arrived == completed + running + stopping + queued + failed; }
};

// Batch jobs sharing the cluster with serving, run through the scheduling core: each
// arrives at its time and is submitted as a task of its class's pool (the core may
// preempt lower-priority work for it, under the preemption policy); one that does not
// fit waits in a queue ordered by priority, then arrival. A running job checkpoints
// every interval of its run time; preempted, it loses the work since its last
// checkpoint, goes back to the queue and later resumes from the checkpoint. A job too
// big for every node fails at arrival (counted, never dropped silently).
class BatchRunner final : public SimWorld::Agents, private engine::EventHandler {
 public:
  // `classes` must name every job's class; job names must be unique. Without
  // `prune_refusals` every queued job is offered to the core on every pass (the slow twin
  // the property tests compare against: outcomes must not differ).
  BatchRunner(engine::Simulation& sim, scheduler::Scheduler& core, std::vector<traces::BatchJobRecord> jobs,
              std::map<std::string, BatchClass> classes, bool prune_refusals = true);

  // Arms the first arrival (at its time).
  void start();
  // A preemption (the world's agents, SimWorld::Agents): the core asks the agent of a
  // job's task to stop. The job's run ends now (the work since its last checkpoint is
  // lost); it waits, stopping, until its agent stops (stopped()). Returns when the agent
  // answers (nullopt: never, it hangs), drawn from the job's class. Called from inside a
  // core call, so it only records and schedules.
  std::optional<engine::SimTime> answer_in(const scheduler::Task& task) override;
  // The job's agent stopped (answered, or killed at cancel_timeout): the job goes back to
  // the queue. Called from inside a core call when the agent stops at once.
  void stopped(scheduler::TaskId task, bool answered) override;
  // Resources came free (on `node`; none: anywhere): queued jobs are tried (once per
  // instant, however many calls).
  void resources_freed(std::optional<std::uint32_t> node);

  const BatchCounts& counts() const { return counts_; }
  // Every job of the run, arrived or not yet.
  std::uint64_t jobs_total() const { return jobs_.size(); }
  // Who preempted whom: (preemptor's class, victim's class) -> preemptions. The runner
  // counts its own jobs' submissions; whoever else submits to the core (the serving
  // instances) reports its victims, naming itself.
  using PreemptionsByClass = std::map<std::pair<std::string, std::string>, std::uint64_t>;
  PreemptionsByClass preemptions_by_class() const;
  // The preemptor id of `name`: a batch class's own, else one given for it now.
  std::uint32_t preemptor_id(const std::string& name);
  void count_preemptions(std::uint32_t preemptor, const std::vector<scheduler::TaskId>& victims);
  // Reports each ended run of a job to `sink` from now on (nullptr: stop).
  void set_activity_sink(ActivitySink* sink) { activity_ = sink; }
  // GPU-seconds run by jobs still running at `now` since they (re)started.
  double running_gpu_s(SimTime now) const;
  // GPU-seconds held by batch jobs from the start to `now`: useful + lost + running_gpu_s.
  double held_gpu_s(SimTime now) const { return held_.total(now) / 1e6; }
  // The core's task id of job `name`.
  static std::string task_id(const std::string& name) { return "batch/" + name; }
  // Counts agree with the jobs' states and the core's running tasks; empty when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  enum EventKind : std::uint64_t { kArrival, kComplete, kDispatch };
  enum class State { kPending, kQueued, kRunning, kStopping, kCompleted, kFailed };
  struct Job {
    traces::BatchJobRecord record;
    const BatchClass* cls = nullptr;
    std::uint32_t class_id = 0;  // its class's place in classes_ (and preemptor id)
    scheduler::ResourceVector need;
    State state = State::kPending;
    double done_s = 0.0;  // work saved (by checkpoints) or finished
    std::string task_name;  // the core's name of its task (task_id())
    scheduler::TaskId task = scheduler::kNoTask;  // its task's id while the core holds it
    SimTime segment_start;
    std::uint32_t segment = 0;  // tells a stale completion event from the current one
    std::uint32_t node = 0;     // while running
    std::size_t slot = 0;       // its place in running_on_[node]
    // hopeless() found it covered while refusals_kept_ had this value (0: never).
    std::uint64_t hopeless_as_of = 0;
  };
  // A job the core refused, standing for every job it covers (see hopeless()); once
  // lapsed, also the nodes where resources freed since may let those jobs in.
  struct Refusal {
    const BatchClass* cls;
    std::uint32_t class_id;
    scheduler::ResourceVector need;
    std::vector<std::uint32_t> lapsed_on;
  };
  using QueueKey = std::pair<double, std::size_t>;  // (-priority, job index)

  void on_event(const engine::EventPayload& payload) override;
  void arrive(std::size_t index);
  // Submits the job to the core; true when it runs.
  bool try_start(std::size_t index);
  void complete(std::size_t index, std::uint32_t segment);
  void leave_node(std::size_t index);
  void dispatch();
  // Whether the core would refuse `job` now, judged without asking it: a refusal covers
  // a job that needs at least as much with no more preemption options (the same class;
  // or, with no label rules in force, the same pool at no higher priority). Starting
  // work never adds to any node's free plus preemptible room, so a refusal holds until
  // resources are freed; then only on the node that gained room can it lapse, and only
  // if that node's free room plus the work there it could preempt (at a priority at
  // least the smallest threshold below its own) would hold it; even then it stands for
  // the jobs that fit none of the nodes it lapsed on, as their room is now (and they get
  // a refusal of their own, as from the core). Under a minimum runtime victims ripen with
  // time, so nothing is judged.
  bool hopeless(Job& job);
  // A lapsed refusal still stands for `job` (one it covers) when none of the nodes it
  // lapsed on has the room for the job now: judged only for jobs about to be tried, so
  // the asking costs less than the core's refusal it saves. Forgets the nodes where the
  // room shrank below the refusal's own need (until the next free there).
  bool lapsed_refusal_holds(Refusal& r, const Job& job) const;
  void add_refusal(Refusal refusal);
  // Moves the refusals that resources freed since the last call may have made stale to
  // lapsed_, noting the nodes where (when resources were freed since: the check is
  // inline, as hopeless() runs per job).
  void refresh_refusals() {
    if (!freed_nodes_.empty() || freed_anywhere_) lapse_stale_refusals();
  }
  void lapse_stale_refusals();
  // The most `priority` work could find on `node`: its free room plus the batch work
  // there the policy could let it preempt (serving instances are protected).
  scheduler::ResourceVector room_for(std::uint32_t node, double priority) const;
  bool priority_rules_only() const;
  void enqueue(std::size_t index);
  // The job whose task the core holds under `task` (a batch job's: serving tasks are
  // never preempted).
  std::size_t job_of(scheduler::TaskId task) const;
  bool fits_some_node(const scheduler::ResourceVector& need) const;

  engine::Simulation& sim_;
  scheduler::Scheduler& core_;
  std::vector<Job> jobs_;
  std::map<std::string, BatchClass> classes_;
  std::vector<std::uint32_t> job_of_task_;  // by TaskId: the job index, or kNoJob
  static constexpr std::uint32_t kNoJob = 0xFFFFFFFFu;
  // Preemptions by preemptor id, then the victim's class id: counted on every preemption,
  // so no names are compared there. Preemptor ids are the batch classes' (in classes_'
  // order), then other preemptors' (the serving instances), named in preemptor_names_.
  std::vector<std::string> preemptor_names_;
  std::vector<std::vector<std::uint64_t>> preempted_by_;
  std::size_t next_arrival_ = 0;
  std::set<QueueKey> queue_;
  std::vector<scheduler::ResourceVector> node_shapes_;  // distinct node capacities
  bool prune_refusals_;
  bool dispatch_armed_ = false;
  std::vector<Refusal> refused_;
  // Refusals resources freed since may have made stale, with the nodes where: the most
  // recent kLapsedKept (forgetting one only means asking the core).
  std::vector<Refusal> lapsed_;
  static constexpr std::size_t kLapsedKept = 8;
  // By (refused class id, job class id): a refusal of the first covers a job of the second
  // under priority rules alone (the same pool, at no higher priority). Worked out once,
  // since dispatch() asks for every queued job.
  std::vector<char> covers_by_pool_;
  std::vector<std::uint32_t> freed_nodes_;  // since the refusals were last refreshed
  bool freed_anywhere_ = false;
  // Grows whenever refusals are dropped: a job found covered since then still is.
  std::uint64_t refusals_kept_ = 1;
  std::vector<std::vector<std::size_t>> running_on_;  // running jobs by node
  BatchCounts counts_;
  metrics::LevelIntegral held_;  // GPUs held by running jobs
  ActivitySink* activity_ = nullptr;
};

}  // namespace meshsim::shared
