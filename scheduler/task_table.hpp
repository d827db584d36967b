#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/task.hpp"

namespace meshsim::scheduler {

// The core's tasks by id (running, preempted, requeued or lost: a completed task leaves,
// only counted), and the running ones by sequence number, the order they started in.
class TaskTable {
 public:
  const Task* find(const std::string& id) const;
  Task* find(const std::string& id);
  const std::map<std::string, Task>& all() const { return tasks_; }
  // Running tasks by sequence number (pointers into the table, a node map).
  const std::unordered_map<std::uint64_t, Task*>& running() const { return running_; }
  Task& running(std::uint64_t seq) const { return *running_.at(seq); }
  // The sequence number the next task to start gets.
  std::uint64_t next_seq() const { return next_seq_; }

  // `task` runs from `now` under the next sequence number, replacing a task of its id.
  Task& start(Task task, SimTime now);
  // A running task stops; the caller sets the state it ends in.
  void stop(const Task& task) { running_.erase(task.seq); }
  // A task that completed leaves the table.
  void erase(const std::string& id) { tasks_.erase(id); }

  // Replaces the table with saved tasks; the running ones are listed by sequence number.
  void restore(const std::vector<Task>& tasks, std::uint64_t next_seq);

  // Running tasks are listed by their sequence number and no other is; empty when all is
  // well.
  std::vector<std::string> check_invariants() const;

 private:
  std::map<std::string, Task> tasks_;
  std::unordered_map<std::uint64_t, Task*> running_;
  std::uint64_t next_seq_ = 1;
};

}  // namespace meshsim::scheduler
