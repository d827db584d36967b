#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/preemption_rules.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/bucket_treap.hpp"

namespace meshsim::scheduler {

// The running tasks as preemption sees them, indexed so that evaluation and victim
// selection do not walk every task (the seed's own warning). Tasks are grouped into
// classes that the policy judges alike: same pool, same values of the labels the rules
// mention, and whether preempting them gives resources back (a dedicated agent). The
// policy decides once per class.
// Within a class, tasks sit in buckets of equal priority: in a bucket every task has the
// same priority difference, so scores order by deadline (latest first) while deadlines
// are ahead and tie (oldest first) once they have passed. A BucketTreap over the buckets
// counts qualifying tasks and bounds scores, so a query walks best-first through the
// few buckets that hold winners. Tasks younger than the minimum runtime wait in a queue
// and join when they mature; tasks whose deadline passes move to their bucket's
// past-deadline list when a query first sees that time.
//
// Cost of a query: O(classes x log buckets + k log k); see experiments/bench/scheduler_bench.
class VictimIndex {
 public:
  static constexpr std::uint64_t kNoSeq = std::numeric_limits<std::uint64_t>::max();
  struct TaskInfo {
    std::uint64_t seq = 0;
    std::string pool;
    Labels labels;
    ResourceVector freed;  // what preempting it gives back to its pool
    // The most GPU room (milli) preempting it frees on any one node: the bundles of its
    // own placement group there (0 when it has none).
    std::int64_t gpu_freed_on_a_node_milli = 0;
    double priority = 0.0;
    double start = 0.0;
    double deadline = 0.0;  // start + estimated duration (start when unknown)
  };
  // Tasks of one priority in one class.
  struct Bucket {
    std::set<std::pair<double, std::uint64_t>> ahead;  // (-deadline, seq): latest deadline first
    std::set<std::uint64_t> past;                       // deadline passed: oldest first
    // At most the lowest seq in `ahead` (the lowest since it was last empty): the
    // bucket's summary needs only a bound, as a cursor breaks ties by it to expand the
    // bound first, which a lower seq still does.
    std::uint64_t ahead_seq_floor = kNoSeq;
    std::size_t size() const { return ahead.size() + past.size(); }
  };
  struct Class {
    std::string pool;
    Labels labels;  // only the keys the label rules mention
    bool gives_back = false;  // its tasks' `freed` is not zero
    // At least the largest gpu_freed_on_a_node_milli of its tasks (it never shrinks, so
    // it bounds what one victim of the class can free on a node).
    std::int64_t most_gpu_freed_on_a_node_milli = 0;
    std::map<double, Bucket> buckets;
    BucketTreap tree;
    std::size_t tasks = 0;
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
    // A class's qualifying buckets (expanded only when they reach the top of the heap),
    // a subtree of buckets, or the next task of one bucket (through a walker).
    enum class Kind : std::uint8_t { kPrefix, kWhole, kTask };
    struct Item {
      double value;
      std::uint64_t seq;
      std::uint32_t class_id;
      std::uint32_t node;  // tree node (kWhole) or walker (kTask)
      Kind kind;
    };
    // Walks one bucket's tasks best first: deadlines ahead, then past ones.
    struct Walker {
      const Bucket* bucket;
      double priority;
      std::set<std::pair<double, std::uint64_t>>::const_iterator ahead;
      std::set<std::uint64_t>::const_iterator past;
    };
    struct Worse {
      bool operator()(const Item& a, const Item& b) const {
        return a.value < b.value || (a.value == b.value && a.seq > b.seq);
      }
    };
    void push_bound(std::uint32_t class_id, std::uint32_t node, Kind kind, const BucketTreap::Aggregate& agg);
    void push_bucket(std::uint32_t class_id, std::uint32_t node);
    // Pushes the walker's current task, if any.
    void push_task(std::uint32_t class_id, std::uint32_t walker);
    double score(std::uint32_t class_id, double priority, double deadline) const;

    const VictimIndex* index_ = nullptr;
    double incoming_priority_ = 0.0;
    double kappa_ = 0.0;
    double now_ = 0.0;
    double min_score_ = 0.0;
    std::vector<Walker> walkers_;
    // The index's cached rules for this incoming task (valid while the cursor lives).
    const std::vector<std::optional<VictimRule>>* rules_ = nullptr;
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
    bool ahead = false;  // in its bucket's `ahead` set (and in deadlines_)
    std::multimap<double, std::uint64_t>::iterator deadline_at;
  };
  std::uint32_t class_for(const TaskInfo& info);
  void insert_mature(Slot& slot, double now);
  void erase_mature(Slot& slot);
  void refresh_bucket(Class& c, double priority);
  // Moves matured tasks into their classes and passed deadlines to `past`.
  void advance_to(double now);
  // The rule of every class for this incoming task, cached by the task's pool and rule
  // labels: the policy's string matching is the costliest part of a query otherwise.
  const std::vector<std::optional<VictimRule>>& rules_for(const IncomingTask& incoming);

  PreemptionPolicy policy_;
  std::set<std::string> rule_keys_;
  std::map<std::tuple<std::string, Labels>, std::vector<std::optional<VictimRule>>, std::less<>> rules_cache_;
  std::vector<std::unique_ptr<Class>> classes_;
  std::map<std::tuple<std::string, Labels, bool>, std::uint32_t, std::less<>> class_ids_;
  std::unordered_map<std::uint64_t, Slot> slots_;
  std::multimap<double, std::uint64_t> young_;      // start time -> task
  std::multimap<double, std::uint64_t> deadlines_;  // deadline -> task, for tasks still ahead
};

}  // namespace meshsim::scheduler
