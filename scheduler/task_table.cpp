#include "scheduler/task_table.hpp"

namespace meshsim::scheduler {

const Task* TaskTable::find(const std::string& id) const {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

Task* TaskTable::find(const std::string& id) {
  const auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : &it->second;
}

Task& TaskTable::start(Task task, SimTime now) {
  task.seq = next_seq_++;
  task.start_time = now;
  task.state = TaskState::kRunning;
  task.saved_state.reset();
  task.lost_work = 0.0;
  const std::string id = task.id;
  Task& stored = tasks_.insert_or_assign(id, std::move(task)).first->second;
  running_[stored.seq] = &stored;
  return stored;
}

void TaskTable::restore(const std::vector<Task>& tasks, std::uint64_t next_seq) {
  tasks_.clear();
  running_.clear();
  for (const auto& task : tasks) {
    Task& stored = tasks_.emplace(task.id, task).first->second;
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
  return problems;
}

}  // namespace meshsim::scheduler
