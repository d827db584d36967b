#include "scheduler/task_table.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {

const Task* TaskTable::find(const std::string& id) const {
  const auto it = ids_.find(id);
  return it == ids_.end() ? nullptr : &slots_[it->second];
}

Task* TaskTable::find(const std::string& id) {
  const auto it = ids_.find(id);
  return it == ids_.end() ? nullptr : &slots_[it->second];
}

std::vector<const Task*> TaskTable::by_name() const {
  std::vector<const Task*> out;
  out.reserve(ids_.size());
  for (const auto& [name, id] : ids_) out.push_back(&slots_[id]);
  std::sort(out.begin(), out.end(), [](const Task* a, const Task* b) { return a->id < b->id; });
  return out;
}

std::vector<std::string> TaskTable::names(const std::vector<TaskId>& ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const TaskId id : ids) {
    const Task* task = find(id);
    MESHSIM_CHECK(task != nullptr, "no task of id " + std::to_string(id));
    out.push_back(task->id);
  }
  return out;
}

TaskId TaskTable::new_id() {
  if (free_ids_.empty()) {
    slots_.emplace_back();
    return static_cast<TaskId>(slots_.size() - 1);
  }
  const TaskId id = free_ids_.back();
  free_ids_.pop_back();
  return id;
}

Task& TaskTable::start(Task task, SimTime now) {
  task.seq = next_seq_++;
  task.start_time = now;
  task.state = TaskState::kRunning;
  task.saved_state.reset();
  task.lost_work = 0.0;
  auto [it, fresh] = ids_.try_emplace(task.id, kNoTask);
  if (fresh) it->second = new_id();
  task.handle = it->second;
  Task& stored = slots_[task.handle] = std::move(task);
  running_[stored.seq] = &stored;
  return stored;
}

void TaskTable::erase(const Task& task) {
  const TaskId id = task.handle;
  ids_.erase(task.id);
  slots_[id] = Task{};  // `task` is this slot: its fields are not read after this
  free_ids_.push_back(id);
}

void TaskTable::restore(const std::vector<Task>& tasks, std::uint64_t next_seq) {
  slots_.clear();
  free_ids_.clear();
  ids_.clear();
  running_.clear();
  std::vector<const Task*> ordered;
  ordered.reserve(tasks.size());
  for (const auto& task : tasks) ordered.push_back(&task);
  std::stable_sort(ordered.begin(), ordered.end(), [](const Task* a, const Task* b) { return a->id < b->id; });
  for (const Task* task : ordered) {
    const auto id = static_cast<TaskId>(slots_.size());
    if (!ids_.try_emplace(task->id, id).second) continue;
    Task& stored = slots_.emplace_back(*task);
    stored.handle = id;
    if (stored.state == TaskState::kRunning) {
      running_[stored.seq] = &stored;
    } else {
      stored.agent_id = kNoAgent;
    }
  }
  next_seq_ = next_seq;
}

std::vector<std::string> TaskTable::check_invariants() const {
  std::vector<std::string> problems;
  std::size_t running = 0;
  for (const Task* task : by_name()) {
    if (find(task->handle) != task || find(task->id) != task) {
      problems.push_back("task " + task->id + " is not found by its name and id");
    }
    if (task->state != TaskState::kRunning) continue;
    ++running;
    if (const auto it = running_.find(task->seq); it == running_.end() || it->second != task) {
      problems.push_back("running task " + task->id + " is not indexed");
    }
  }
  if (running != running_.size()) {
    problems.push_back(std::to_string(running) + " running tasks but " + std::to_string(running_.size()) +
                       " registered");
  }
  if (ids_.size() + free_ids_.size() != slots_.size()) {
    problems.push_back(std::to_string(ids_.size()) + " tasks and " + std::to_string(free_ids_.size()) +
                       " free ids, but " + std::to_string(slots_.size()) + " ids");
  }
  return problems;
}

}  // namespace meshsim::scheduler
