#include "scheduler/task_table.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::scheduler {

const Task* TaskTable::find(const std::string& id) const {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

Task* TaskTable::find(const std::string& id) {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
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
    by_id_.push_back(nullptr);
    return static_cast<TaskId>(by_id_.size() - 1);
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
  auto [it, fresh] = tasks_.try_emplace(task.id);
  task.handle = fresh ? new_id() : it->second.handle;
  Task& stored = it->second = std::move(task);
  by_id_[stored.handle] = &stored;
  running_[stored.seq] = &stored;
  return stored;
}

void TaskTable::erase(const Task& task) {
  const TaskId id = task.handle;
  tasks_.erase(tasks_.find(task.id));  // by iterator: `task` is the element itself
  by_id_[id] = nullptr;
  free_ids_.push_back(id);
}

void TaskTable::restore(const std::vector<Task>& tasks, std::uint64_t next_seq) {
  tasks_.clear();
  running_.clear();
  by_id_.clear();
  free_ids_.clear();
  for (const auto& task : tasks) tasks_.emplace(task.id, task);
  for (auto& [name, stored] : tasks_) {
    stored.handle = static_cast<TaskId>(by_id_.size());
    by_id_.push_back(&stored);
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
  for (const auto& [id, task] : tasks_) {
    if (find(task.handle) != &task) problems.push_back("task " + id + " is not found by its id");
    if (task.state != TaskState::kRunning) continue;
    ++running;
    if (const auto it = running_.find(task.seq); it == running_.end() || it->second != &task) {
      problems.push_back("running task " + id + " is not indexed");
    }
  }
  if (running != running_.size()) {
    problems.push_back(std::to_string(running) + " running tasks but " + std::to_string(running_.size()) +
                       " registered");
  }
  if (tasks_.size() + free_ids_.size() != by_id_.size()) {
    problems.push_back(std::to_string(tasks_.size()) + " tasks and " + std::to_string(free_ids_.size()) +
                       " free ids, but " + std::to_string(by_id_.size()) + " ids");
  }
  return problems;
}

}  // namespace meshsim::scheduler
