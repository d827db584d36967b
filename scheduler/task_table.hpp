#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/task.hpp"

namespace meshsim::scheduler {

// The core's tasks (running, preempted, requeued or lost: a completed task leaves, only
// counted), each in the slot of its dense id (TaskId: a name keeps its id while the table
// holds a task of that name, and the id is reused once it leaves), found by name through
// a hash; the running ones also by sequence number, the order they started in.
class TaskTable {
 public:
  const Task* find(const std::string& id) const;
  Task* find(const std::string& id);
  const Task* find(TaskId id) const { return id < slots_.size() && slots_[id].handle == id ? &slots_[id] : nullptr; }
  Task* find(TaskId id) { return id < slots_.size() && slots_[id].handle == id ? &slots_[id] : nullptr; }
  // The names of tasks the table holds, for the API's edge (a submit's victims).
  std::vector<std::string> names(const std::vector<TaskId>& ids) const;
  // Every task the table holds, in name order (state files and listings show them so).
  std::vector<const Task*> by_name() const;
  std::size_t size() const { return ids_.size(); }
  // Running tasks by sequence number (pointers into the table's slots).
  const std::unordered_map<std::uint64_t, Task*>& running() const { return running_; }
  Task& running(std::uint64_t seq) const { return *running_.at(seq); }
  // The sequence number the next task to start gets.
  std::uint64_t next_seq() const { return next_seq_; }

  // `task` runs from `now` under the next sequence number, replacing a task of its name
  // (whose id it keeps).
  Task& start(Task task, SimTime now);
  // A running task stops; the caller sets the state it ends in.
  void stop(const Task& task) { running_.erase(task.seq); }
  // A task that completed leaves the table, its id free for the next new name.
  void erase(const Task& task);

  // Replaces the table with saved tasks (ids given in name order; of two of one name the
  // first is kept); the running ones are listed by sequence number.
  void restore(const std::vector<Task>& tasks, std::uint64_t next_seq);

  // Running tasks are listed by their sequence number and no other is, and every task is
  // found by its name and its id; empty when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  TaskId new_id();

  // By id; a free slot holds an empty task (handle kNoTask). A deque, so references stay
  // valid as it grows.
  std::deque<Task> slots_;
  std::vector<TaskId> free_ids_;
  std::unordered_map<std::string, TaskId> ids_;
  std::unordered_map<std::uint64_t, Task*> running_;
  std::uint64_t next_seq_ = 1;
};

}  // namespace meshsim::scheduler
