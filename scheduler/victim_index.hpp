#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/preemption_rules.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/task_treap.hpp"

namespace meshsim::scheduler {

// The running tasks as preemption sees them, indexed so that evaluation and victim
// selection do not walk every task (the seed's own warning). Tasks are grouped into
// classes that the policy judges alike: same pool, same values of the labels the rules
// mention, same resources freed by preempting them. The policy decides once per class;
// within a class a TaskTreap counts qualifying tasks and yields them best score first.
// Tasks younger than the minimum runtime wait in a queue and join when they mature.
//
// Cost of a query: O(classes x log n + k x depth x log heap); 100,000 running tasks in 48
// classes take about 27 us (experiments/bench/scheduler_bench).
class VictimIndex {
 public:
  struct TaskInfo {
    std::uint64_t seq = 0;
    std::string pool;
    Labels labels;
    ResourceVector freed;  // what preempting it gives back to its pool
    double priority = 0.0;
    double start = 0.0;
    double deadline = 0.0;  // start + estimated duration (start when unknown)
  };
  struct Class {
    std::string pool;
    Labels labels;  // only the keys the label rules mention
    ResourceVector freed;
    TaskTreap tasks;
  };
  struct Candidate {
    std::uint64_t seq = 0;
    double score = 0.0;
    PreemptReason reason = PreemptReason::kSamePool;
    std::uint32_t class_id = 0;
  };
  struct Evaluation {
    std::vector<Candidate> best;  // score descending, then oldest first
    std::size_t eligible = 0;
  };

  // Keeps a copy of the policy that evaluations apply; rebuilds when its kappa, minimum
  // runtime or label keys changed.
  void configure(const PreemptionPolicy& policy);
  const PreemptionPolicy& policy() const { return policy_; }
  void add(TaskInfo info, double now);
  void remove(std::uint64_t seq);
  std::size_t size() const { return slots_.size(); }

  Evaluation evaluate(const IncomingTask& incoming, double now, std::size_t k);

  // Candidates in score order, from the classes `wanted` accepts.
  class Cursor {
   public:
    std::optional<Candidate> next();

   private:
    friend class VictimIndex;
    // A class's whole qualifying prefix (expanded only when it reaches the top of the
    // heap, so classes that hold no winner cost one walk down their tree), a subtree, or
    // one task.
    enum class Kind : std::uint8_t { kPrefix, kWhole, kOne };
    struct Item {
      double value;
      std::uint64_t seq;
      std::uint32_t class_id;
      std::uint32_t node;
      Kind kind;
    };
    struct Worse {
      bool operator()(const Item& a, const Item& b) const {
        return a.value < b.value || (a.value == b.value && a.seq > b.seq);
      }
    };
    void push(std::uint32_t class_id, std::uint32_t node, Kind kind, const TaskTreap::Aggregate& agg);
    void push_node(std::uint32_t class_id, std::uint32_t node, Kind kind);

    const VictimIndex* index_ = nullptr;
    double incoming_priority_ = 0.0;
    double kappa_now_ = 0.0;
    double min_score_ = 0.0;
    std::vector<std::optional<VictimRule>> rules_;
    std::vector<Item> heap_;
  };
  // With `eligible`, also adds up how many tasks qualify in those classes.
  Cursor open(const IncomingTask& incoming, double now,
              const std::function<bool(const Class&)>& wanted, std::size_t* eligible = nullptr);

  const Class& class_of(std::uint32_t id) const { return *classes_[id]; }
  std::size_t class_count() const { return classes_.size(); }

  // Every stored task sits in exactly one place (its class or the young queue); empty
  // when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  struct Slot {
    TaskInfo info;
    std::uint32_t class_id = 0;
    bool young = false;
    std::multimap<double, std::uint64_t>::iterator young_at;
  };
  std::uint32_t class_for(const TaskInfo& info);
  void insert_mature(Slot& slot);
  void mature(double now);
  // The rule of every class for this incoming task, cached by the task's pool and rule
  // labels: the policy's string matching is the costliest part of a query otherwise.
  const std::vector<std::optional<VictimRule>>& rules_for(const IncomingTask& incoming);

  PreemptionPolicy policy_;
  std::set<std::string> rule_keys_;
  std::map<std::pair<std::string, Labels>, std::vector<std::optional<VictimRule>>> rules_cache_;
  std::vector<std::unique_ptr<Class>> classes_;
  std::map<std::tuple<std::string, Labels, ResourceVector>, std::uint32_t> class_ids_;
  std::unordered_map<std::uint64_t, Slot> slots_;
  std::multimap<double, std::uint64_t> young_;  // start time -> task
};

}  // namespace meshsim::scheduler
