#include "sim/shared/batch_runner.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_set>

#include "sim/engine/check.hpp"

namespace meshsim::shared {

BatchRunner::BatchRunner(engine::Simulation& sim, scheduler::Scheduler& core, std::vector<traces::BatchJobRecord> jobs,
                         std::map<std::string, BatchClass> classes, bool prune_refusals)
    : sim_(sim), core_(core), classes_(std::move(classes)), prune_refusals_(prune_refusals), held_(sim.now()) {
  for (const auto& [name, cls] : classes_) preemptor_id(name);
  jobs_.reserve(jobs.size());
  std::unordered_set<std::string> names;
  for (auto& record : jobs) {
    const auto cls = classes_.find(record.job_class);
    MESHSIM_CHECK(cls != classes_.end(), "batch job '" + record.name + "' has class '" + record.job_class +
                                             "', which no batch class names");
    MESHSIM_CHECK(record.duration_s > 0 && record.duration_s <= traces::kMaxBatchSeconds && record.arrival_s >= 0 &&
                      record.arrival_s <= traces::kMaxBatchSeconds,
                  "batch job '" + record.name + "': times out of range");
    Job job;
    job.cls = &cls->second;
    job.class_id = static_cast<std::uint32_t>(std::distance(classes_.begin(), cls));
    job.need = scheduler::ResourceVector::of(record.cpu, record.memory_mb, record.gpu);
    job.record = std::move(record);
    job.task_name = task_id(job.record.name);
    MESHSIM_CHECK(names.insert(job.record.name).second, "batch job name '" + job.record.name + "' appears twice");
    jobs_.push_back(std::move(job));
  }
  MESHSIM_CHECK(std::is_sorted(jobs_.begin(), jobs_.end(),
                               [](const Job& a, const Job& b) { return a.record.arrival_s < b.record.arrival_s; }),
                "batch jobs must be sorted by arrival");
  covers_by_pool_.reserve(classes_.size() * classes_.size());
  for (const auto& by : classes_) {
    for (const auto& of : classes_) {
      covers_by_pool_.push_back(by.second.pool == of.second.pool && by.second.priority >= of.second.priority);
    }
  }
  running_on_.resize(core_.cluster().nodes().size());
  for (const auto& node : core_.cluster().nodes()) {
    if (std::find(node_shapes_.begin(), node_shapes_.end(), node.spec.capacity) == node_shapes_.end()) {
      node_shapes_.push_back(node.spec.capacity);
    }
  }
}

void BatchRunner::start() {
  if (next_arrival_ < jobs_.size()) {
    sim_.schedule_at(SimTime::from_seconds(jobs_[next_arrival_].record.arrival_s), *this,
                     engine::EventPayload{kArrival, next_arrival_});
  }
}

bool BatchRunner::fits_some_node(const scheduler::ResourceVector& need) const {
  return std::any_of(node_shapes_.begin(), node_shapes_.end(),
                     [&](const scheduler::ResourceVector& shape) { return need.fits_in(shape); });
}

void BatchRunner::on_event(const engine::EventPayload& payload) {
  switch (payload.a) {
    case kArrival: {
      // Every job arriving at this microsecond, then the next arrival (one event ahead).
      const SimTime now = sim_.now();
      while (next_arrival_ < jobs_.size() && SimTime::from_seconds(jobs_[next_arrival_].record.arrival_s) <= now) {
        arrive(next_arrival_++);
      }
      start();
      return;
    }
    case kComplete: complete(payload.b & 0xffffffffu, static_cast<std::uint32_t>(payload.b >> 32)); return;
    case kDispatch:
      dispatch_armed_ = false;
      dispatch();
      return;
    default: MESHSIM_CHECK(false, "BatchRunner: unknown event");
  }
}

void BatchRunner::arrive(std::size_t index) {
  Job& job = jobs_[index];
  ++counts_.arrived;
  if (job.need.is_zero() || !fits_some_node(job.need)) {
    job.state = State::kFailed;
    ++counts_.failed;
    return;
  }
  if (hopeless(job) || !try_start(index)) enqueue(index);
}

void BatchRunner::enqueue(std::size_t index) {
  Job& job = jobs_[index];
  job.state = State::kQueued;
  queue_.emplace(-job.cls->priority, index);
  ++counts_.queued;
}

bool BatchRunner::try_start(std::size_t index) {
  Job& job = jobs_[index];
  // A preempted job goes back through the core's restore path (its saved state), then
  // is submitted again under the same name (and id).
  if (const scheduler::Task* task = core_.tasks().find(job.task);
      task != nullptr && task->state == scheduler::TaskState::kPreempted && task->saved_state) {
    const auto restored = core_.restore_task(*task->saved_state);
    MESHSIM_CHECK(restored.success, restored.error);
  }
  scheduler::TaskSpec spec;
  spec.task_id = job.task_name;
  spec.pool = job.cls->pool;
  spec.actor_class = "batch";
  spec.resources = job.need;
  spec.priority = job.cls->priority;
  spec.labels = job.cls->labels;
  spec.estimated_duration = job.record.duration_s - job.done_s;
  spec.checkpoint_interval = job.record.checkpoint_interval_s.value_or(job.cls->checkpoint_interval_s);
  const auto submitted = core_.submit_task_with_preemption(spec);
  if (!submitted.result.success) {
    if (prune_refusals_) add_refusal(Refusal{job.cls, job.class_id, job.need, {}});
    return false;
  }
  job.task = submitted.task;
  if (job_of_task_.size() <= job.task) job_of_task_.resize(job.task + 1, kNoJob);
  job_of_task_[job.task] = static_cast<std::uint32_t>(index);
  count_preemptions(job.class_id, submitted.preempted);
  job.node = submitted.node;
  job.slot = running_on_[job.node].size();
  running_on_[job.node].push_back(index);
  job.state = State::kRunning;
  job.segment_start = sim_.now();
  ++job.segment;
  ++counts_.running;
  ++counts_.starts;
  counts_.gpu_milli_running += job.need.gpu_milli();
  held_.set(static_cast<double>(counts_.gpu_milli_running) / 1000.0, sim_.now());
  const double remaining = job.record.duration_s - job.done_s;
  sim_.schedule_after(SimTime::from_seconds_up(remaining), *this,
                      engine::EventPayload{kComplete, (std::uint64_t{job.segment} << 32) | index});
  return true;
}

void BatchRunner::leave_node(std::size_t index) {
  const Job& job = jobs_[index];
  auto& on_node = running_on_[job.node];
  jobs_[on_node.back()].slot = job.slot;
  on_node[job.slot] = on_node.back();
  on_node.pop_back();
}

void BatchRunner::complete(std::size_t index, std::uint32_t segment) {
  Job& job = jobs_[index];
  if (job.state != State::kRunning || job.segment != segment) return;  // preempted since
  const auto done = core_.complete(job.task);
  MESHSIM_CHECK(done.success, done.error);
  job_of_task_[job.task] = kNoJob;  // the core reuses the id
  job.task = scheduler::kNoTask;
  if (activity_ != nullptr) activity_->on_batch_run(job.record.name, job.node, job.segment_start, sim_.now(), false);
  leave_node(index);
  counts_.useful_gpu_s += (job.record.duration_s - job.done_s) * job.need.gpu();
  job.done_s = job.record.duration_s;
  job.state = State::kCompleted;
  --counts_.running;
  ++counts_.completed;
  counts_.gpu_milli_running -= job.need.gpu_milli();
  held_.set(static_cast<double>(counts_.gpu_milli_running) / 1000.0, sim_.now());
  resources_freed(job.node);
}

std::size_t BatchRunner::job_of(scheduler::TaskId task) const {
  MESHSIM_CHECK(task < job_of_task_.size() && job_of_task_[task] != kNoJob,
                "the core preempted task " + std::to_string(task) + ", which is not a batch job's");
  return job_of_task_[task];
}

std::optional<engine::SimTime> BatchRunner::answer_in(const scheduler::Task& task) {
  const std::size_t index = job_of(task.handle);
  Job& job = jobs_[index];
  MESHSIM_CHECK(job.state == State::kRunning, "the core cancelled batch job '" + job.record.name +
                                                  "', which is not running");
  // The same rule as the core's Task::work_since_checkpoint: checkpoints every interval
  // of run time since the job (re)started.
  const double elapsed = (sim_.now() - job.segment_start).seconds();
  const double interval = job.record.checkpoint_interval_s.value_or(job.cls->checkpoint_interval_s);
  const double saved = interval > 0 ? std::floor(elapsed / interval) * interval : 0.0;
  job.done_s = std::min(job.record.duration_s, job.done_s + saved);
  if (activity_ != nullptr) activity_->on_batch_run(job.record.name, job.node, job.segment_start, sim_.now(), true);
  leave_node(index);
  counts_.useful_gpu_s += saved * job.need.gpu();
  counts_.lost_gpu_s += (elapsed - saved) * job.need.gpu();
  job.state = State::kStopping;
  --counts_.running;
  ++counts_.stopping;
  counts_.gpu_milli_running -= job.need.gpu_milli();
  held_.set(static_cast<double>(counts_.gpu_milli_running) / 1000.0, sim_.now());
  ++counts_.preemptions;
  // Only classes with hung agents draw, so runs without them keep their random streams.
  const bool hangs = job.cls->hung_share > 0 && sim_.rng("batch.hung_agents").uniform() < job.cls->hung_share;
  // Room the preemptor does not take is free now, before the agent stops.
  if (hangs || job.cls->cancel_answer_s > 0) resources_freed(job.node);
  if (hangs) return std::nullopt;
  return engine::SimTime::from_seconds_up(job.cls->cancel_answer_s);
}

std::uint32_t BatchRunner::preemptor_id(const std::string& name) {
  const auto known = std::find(preemptor_names_.begin(), preemptor_names_.end(), name);
  if (known != preemptor_names_.end()) return static_cast<std::uint32_t>(known - preemptor_names_.begin());
  preemptor_names_.push_back(name);
  preempted_by_.emplace_back(classes_.size(), 0);
  return static_cast<std::uint32_t>(preemptor_names_.size() - 1);
}

void BatchRunner::count_preemptions(std::uint32_t preemptor, const std::vector<scheduler::TaskId>& victims) {
  for (const scheduler::TaskId victim : victims) ++preempted_by_[preemptor][jobs_[job_of(victim)].class_id];
}

BatchRunner::PreemptionsByClass BatchRunner::preemptions_by_class() const {
  PreemptionsByClass out;
  for (std::size_t preemptor = 0; preemptor < preempted_by_.size(); ++preemptor) {
    std::size_t victim = 0;
    for (const auto& [name, cls] : classes_) {
      if (const std::uint64_t n = preempted_by_[preemptor][victim++]; n > 0) out[{preemptor_names_[preemptor], name}] = n;
    }
  }
  return out;
}

void BatchRunner::stopped(scheduler::TaskId task, bool answered) {
  const std::size_t index = job_of(task);
  Job& job = jobs_[index];
  MESHSIM_CHECK(job.state == State::kStopping, "batch job '" + job.record.name + "' stopped twice");
  --counts_.stopping;
  if (!answered) ++counts_.hung_agents;
  ++counts_.requeues;
  enqueue(index);
  resources_freed(job.node);
}

void BatchRunner::resources_freed(std::optional<std::uint32_t> node) {
  if (node) {
    freed_nodes_.push_back(*node);
  } else {
    freed_anywhere_ = true;
  }
  if (dispatch_armed_ || queue_.empty()) return;
  dispatch_armed_ = true;
  sim_.schedule_after(SimTime::zero(), *this, engine::EventPayload{kDispatch, 0});
}

bool BatchRunner::priority_rules_only() const {
  const auto& policy = core_.policy();
  return !policy.enable_label_preemption || policy.label_preemption_rules.empty();
}

scheduler::ResourceVector BatchRunner::room_for(std::uint32_t node, double priority) const {
  const auto& policy = core_.policy();
  // A victim trails by at least the threshold of its pool's rule.
  const double threshold = policy.enable_cross_pool_preemption
                               ? std::min(policy.same_pool_priority_threshold, policy.cross_pool_priority_threshold)
                               : policy.same_pool_priority_threshold;
  scheduler::ResourceVector room = core_.cluster().nodes()[node].ledger.available();
  for (const std::size_t index : running_on_[node]) {
    if (priority - jobs_[index].cls->priority >= threshold) room += jobs_[index].need;
  }
  return room;
}

void BatchRunner::lapse_stale_refusals() {
  const std::size_t before = refused_.size();
  if (freed_anywhere_ || !priority_rules_only()) {
    refused_.clear();
    lapsed_.clear();
  } else {
    std::sort(freed_nodes_.begin(), freed_nodes_.end());
    freed_nodes_.erase(std::unique(freed_nodes_.begin(), freed_nodes_.end()), freed_nodes_.end());
    const auto lapse = [&](Refusal& r) {
      for (const std::uint32_t node : freed_nodes_) {
        if (std::find(r.lapsed_on.begin(), r.lapsed_on.end(), node) == r.lapsed_on.end() &&
            r.need.fits_in(room_for(node, r.cls->priority))) {
          r.lapsed_on.push_back(node);
        }
      }
      return !r.lapsed_on.empty();
    };
    for (Refusal& r : lapsed_) lapse(r);
    for (auto r = refused_.begin(); r != refused_.end();) {
      if (!lapse(*r)) {
        ++r;
        continue;
      }
      lapsed_.push_back(std::move(*r));
      r = refused_.erase(r);
    }
    if (lapsed_.size() > kLapsedKept) lapsed_.erase(lapsed_.begin(), lapsed_.end() - kLapsedKept);
  }
  freed_nodes_.clear();
  freed_anywhere_ = false;
  if (refused_.size() != before) ++refusals_kept_;
}

void BatchRunner::add_refusal(Refusal refusal) {
  // Kept minimal per class: a refusal of the same class needing no more already covers
  // every job this one would, and this one covers every job of a larger one (so dropping
  // it, or a lapsed one it covers, leaves coverage unchanged and refusals_kept_ need not move).
  const auto stronger = [](const Refusal& a, const Refusal& b) {
    return a.class_id == b.class_id && a.need.fits_in(b.need);
  };
  if (std::any_of(refused_.begin(), refused_.end(), [&](const Refusal& r) { return stronger(r, refusal); })) return;
  std::erase_if(refused_, [&](const Refusal& r) { return stronger(refusal, r); });
  std::erase_if(lapsed_, [&](const Refusal& r) { return stronger(refusal, r); });
  refusal.lapsed_on.clear();
  refused_.push_back(std::move(refusal));
}

bool BatchRunner::lapsed_refusal_holds(Refusal& r, const Job& job) const {
  bool holds = true;
  std::erase_if(r.lapsed_on, [&](std::uint32_t node) {
    if (!holds) return false;  // decided: the nodes left wait for the next judgement
    const scheduler::ResourceVector room = room_for(node, r.cls->priority);
    if (!r.need.fits_in(room)) return true;
    holds = !job.need.fits_in(job.cls->priority == r.cls->priority ? room : room_for(node, job.cls->priority));
    return false;
  });
  return holds;
}

bool BatchRunner::hopeless(Job& job) {
  if (!prune_refusals_ || core_.policy().min_runtime_before_preemption > 0) return false;
  refresh_refusals();
  // Refusals are only added since (none dropped): what covered it still does.
  if (job.hopeless_as_of == refusals_kept_) return true;
  const bool by_pool = priority_rules_only();
  const std::size_t classes = classes_.size();
  const auto covers = [&](const Refusal& r) {
    const bool as_able =
        r.class_id == job.class_id || (by_pool && covers_by_pool_[r.class_id * classes + job.class_id] != 0);
    return as_able && r.need.fits_in(job.need);
  };
  if (std::any_of(refused_.begin(), refused_.end(), covers)) {
    job.hopeless_as_of = refusals_kept_;
    return true;
  }
  const auto stands_for_it = [&](Refusal& r) { return covers(r) && lapsed_refusal_holds(r, job); };
  if (!std::any_of(lapsed_.begin(), lapsed_.end(), stands_for_it)) return false;
  // Refused as the core would have: the job's own refusal then covers it (and its like).
  add_refusal(Refusal{job.cls, job.class_id, job.need, {}});
  job.hopeless_as_of = refusals_kept_;
  return true;
}

void BatchRunner::dispatch() {
  // Jobs in priority then arrival order; those hopeless() calls so are skipped.
  for (auto it = queue_.begin(); it != queue_.end();) {
    const std::size_t index = it->second;
    if (hopeless(jobs_[index])) {
      ++it;
      continue;
    }
    // Starting may preempt lower-priority jobs, which are queued behind this one: the
    // iterator stays valid.
    const auto next = std::next(it);
    --counts_.queued;
    if (try_start(index)) {
      queue_.erase(it);
    } else {
      ++counts_.queued;
    }
    it = next;
  }
}

double BatchRunner::running_gpu_s(SimTime now) const {
  double total = 0.0;
  for (const Job& job : jobs_) {
    if (job.state == State::kRunning) total += (now - job.segment_start).seconds() * job.need.gpu();
  }
  return total;
}

std::vector<std::string> BatchRunner::check_invariants() const {
  std::vector<std::string> problems;
  std::uint64_t by_state[6] = {};
  for (const Job& job : jobs_) {
    ++by_state[static_cast<int>(job.state)];
    // By name, so that the ids the runner keeps are checked against the core's too.
    const scheduler::Task* task = core_.tasks().find(job.task_name);
    if (task != nullptr && task->handle != job.task) {
      problems.push_back("batch job '" + job.record.name + "' holds task id " + std::to_string(job.task) +
                         ", the core " + std::to_string(task->handle));
    }
    const bool core_running = task != nullptr && task->state == scheduler::TaskState::kRunning;
    if (core_running != (job.state == State::kRunning)) {
      problems.push_back("batch job '" + job.record.name + "' is " + (core_running ? "" : "not ") +
                         "running in the core but its runner state disagrees");
    }
  }
  const auto count = [&](State s) { return by_state[static_cast<int>(s)]; };
  if (count(State::kQueued) != counts_.queued || queue_.size() != counts_.queued) {
    problems.push_back("batch queue holds " + std::to_string(queue_.size()) + " jobs, " +
                       std::to_string(count(State::kQueued)) + " are queued, counted " +
                       std::to_string(counts_.queued));
  }
  if (count(State::kRunning) != counts_.running || count(State::kStopping) != counts_.stopping ||
      count(State::kCompleted) != counts_.completed || count(State::kFailed) != counts_.failed) {
    problems.push_back("batch counts disagree with the jobs' states");
  }
  if (!counts_.adds_up()) problems.push_back("batch jobs arrived != completed + running + stopping + queued + failed");
  std::uint64_t attributed = 0;
  for (const auto& row : preempted_by_) {
    for (const std::uint64_t n : row) attributed += n;
  }
  if (attributed != counts_.preemptions) {
    problems.push_back(std::to_string(counts_.preemptions) + " batch preemptions, " + std::to_string(attributed) +
                       " of them attributed to a preemptor's class");
  }
  return problems;
}

}  // namespace meshsim::shared
