#include "scheduler/victim_index.hpp"

#include <algorithm>

namespace meshsim::scheduler {
namespace {

std::set<std::string> rule_keys_of(const PreemptionPolicy& policy) {
  std::set<std::string> keys;
  for (const auto& [key, rules] : policy.label_preemption_rules) keys.insert(key);
  return keys;
}

// The bound on a subtree (or the exact score of one task) with the lowest sequence among
// the terms attaining it, so that ties go to the older task.
std::pair<double, std::uint64_t> bound_of(const VictimRule& rule, double incoming_priority, double kappa_now,
                                          const TaskTreap::Aggregate& agg) {
  const double terms[] = {incoming_priority + (agg.terms.kappa_deadline_minus_priority - kappa_now),
                          incoming_priority + (-agg.terms.priority),
                          rule.score_floor + (agg.terms.kappa_deadline - kappa_now), rule.score_floor + 0.0};
  const std::uint64_t seqs[] = {agg.seq_kdp, agg.seq_priority, agg.seq_kd, agg.min_seq};
  // Equal to preempt_score(rule, incoming_priority, kappa_now, agg.terms): adding a
  // constant commutes with max exactly in floating point.
  const double value = std::max(std::max(terms[0], terms[1]), std::max(terms[2], terms[3]));
  std::uint64_t seq = std::numeric_limits<std::uint64_t>::max();
  for (int i = 0; i < 4; ++i) {
    if (terms[i] == value) seq = std::min(seq, seqs[i]);
  }
  return {value, seq};
}

}  // namespace

void VictimIndex::configure(const PreemptionPolicy& policy) {
  auto keys = rule_keys_of(policy);
  const bool same_layout = policy.remaining_time_weight == policy_.remaining_time_weight &&
                           policy.min_runtime_before_preemption == policy_.min_runtime_before_preemption &&
                           keys == rule_keys_ && !classes_.empty();
  policy_ = policy;
  rules_cache_.clear();
  if (same_layout) return;
  rule_keys_ = std::move(keys);
  // Rebuild: the score terms, the classes or the young queue depend on what changed.
  std::vector<TaskInfo> infos;
  infos.reserve(slots_.size());
  double latest = 0.0;
  for (auto& [seq, slot] : slots_) {
    latest = std::max(latest, slot.info.start);
    infos.push_back(std::move(slot.info));
  }
  std::sort(infos.begin(), infos.end(), [](const TaskInfo& a, const TaskInfo& b) { return a.seq < b.seq; });
  slots_.clear();
  young_.clear();
  classes_.clear();
  class_ids_.clear();
  // Tasks re-enter as young; the next query matures those old enough.
  for (auto& info : infos) add(std::move(info), latest - policy_.min_runtime_before_preemption - 1.0);
}

std::uint32_t VictimIndex::class_for(const TaskInfo& info) {
  Labels labels;
  for (const auto& key : rule_keys_) {
    if (const auto it = info.labels.find(key); it != info.labels.end()) labels.emplace(key, it->second);
  }
  auto key = std::make_tuple(info.pool, labels, info.freed);
  const auto it = class_ids_.find(key);
  if (it != class_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(classes_.size());
  classes_.push_back(std::make_unique<Class>(Class{info.pool, std::move(labels), info.freed, {}}));
  class_ids_.emplace(std::move(key), id);
  return id;
}

void VictimIndex::insert_mature(Slot& slot) {
  const TaskInfo& info = slot.info;
  classes_[slot.class_id]->tasks.insert({score_terms(policy_.remaining_time_weight, info.priority, info.deadline), info.seq});
  slot.young = false;
}

void VictimIndex::add(TaskInfo info, double now) {
  const std::uint64_t seq = info.seq;
  Slot slot{std::move(info), 0, true, {}};
  slot.class_id = class_for(slot.info);
  auto [it, inserted] = slots_.emplace(seq, std::move(slot));
  if (!inserted) return;
  Slot& stored = it->second;
  if (now - stored.info.start >= policy_.min_runtime_before_preemption) {
    insert_mature(stored);
  } else {
    stored.young_at = young_.emplace(stored.info.start, seq);
  }
}

void VictimIndex::remove(std::uint64_t seq) {
  const auto it = slots_.find(seq);
  if (it == slots_.end()) return;
  Slot& slot = it->second;
  if (slot.young) {
    young_.erase(slot.young_at);
  } else {
    classes_[slot.class_id]->tasks.erase(slot.info.priority, seq);
  }
  slots_.erase(it);
}

void VictimIndex::mature(double now) {
  while (!young_.empty() && now - young_.begin()->first >= policy_.min_runtime_before_preemption) {
    Slot& slot = slots_.at(young_.begin()->second);
    young_.erase(young_.begin());
    insert_mature(slot);
  }
}

const std::vector<std::optional<VictimRule>>& VictimIndex::rules_for(const IncomingTask& incoming) {
  Labels rule_labels;
  for (const auto& key : rule_keys_) {
    if (const auto it = incoming.labels.find(key); it != incoming.labels.end()) rule_labels.emplace(key, it->second);
  }
  if (rules_cache_.size() > 4096) rules_cache_.clear();  // bounded: distinct incoming kinds are few
  auto& rules = rules_cache_[{incoming.pool, rule_labels}];
  const IncomingTask projected{incoming.priority, incoming.pool, std::move(rule_labels)};
  while (rules.size() < classes_.size()) {
    const Class& c = *classes_[rules.size()];
    rules.push_back(victim_rule(policy_, projected, c.pool, c.labels));
  }
  return rules;
}

VictimIndex::Cursor VictimIndex::open(const IncomingTask& incoming, double now,
                                      const std::function<bool(const Class&)>& wanted, std::size_t* eligible) {
  mature(now);
  Cursor cursor;
  cursor.index_ = this;
  cursor.incoming_priority_ = incoming.priority;
  const PreemptionPolicy& policy = policy_;
  cursor.kappa_now_ = policy.remaining_time_weight * now;
  cursor.min_score_ = policy.min_preempt_score;
  cursor.rules_ = rules_for(incoming);
  const double p = incoming.priority;
  for (std::uint32_t id = 0; id < classes_.size(); ++id) {
    const auto& rule = cursor.rules_[id];
    const TaskTreap& tasks = classes_[id]->tasks;
    if (!rule || tasks.size() == 0 || !wanted(*classes_[id])) continue;
    auto qualifies = [&](double priority) { return delta_qualifies(*rule, p, priority); };
    if (!qualifies(tasks.aggregate(tasks.root()).terms.priority)) continue;  // not even the lowest priority
    // The whole class's bound stands in for its qualifying part until the class reaches
    // the top of the heap: a valid upper bound, and O(1) for classes that hold no winner.
    cursor.push(id, TaskTreap::kNil, Cursor::Kind::kPrefix, tasks.aggregate(tasks.root()));
    if (eligible == nullptr) continue;
    // score >= delta, so where the rule's floor reaches min_preempt_score every task of
    // the prefix counts; otherwise the band between the two needs each task's score.
    if (!rule->needs_min_score || rule->delta_floor >= policy.min_preempt_score) {
      *eligible += tasks.count_prefix(qualifies);
      continue;
    }
    auto reaches_min = [&](double priority) { return qualifies(priority) && p - priority >= policy.min_preempt_score; };
    *eligible += tasks.count_prefix(reaches_min);
    tasks.for_each_between(qualifies, reaches_min, [&](const TaskTreap::Entry& entry) {
      if (preempt_score(*rule, p, cursor.kappa_now_, entry.terms) >= policy.min_preempt_score) ++*eligible;
    });
  }
  return cursor;
}

void VictimIndex::Cursor::push(std::uint32_t class_id, std::uint32_t node, Kind kind, const TaskTreap::Aggregate& agg) {
  const auto [value, seq] = bound_of(*rules_[class_id], incoming_priority_, kappa_now_, agg);
  heap_.push_back(Item{value, seq, class_id, node, kind});
  std::push_heap(heap_.begin(), heap_.end(), Worse{});
}

void VictimIndex::Cursor::push_node(std::uint32_t class_id, std::uint32_t node, Kind kind) {
  const TaskTreap& tasks = index_->classes_[class_id]->tasks;
  push(class_id, node, kind, kind == Kind::kWhole ? tasks.aggregate(node) : TaskTreap::single(tasks.entry(node)));
}

std::optional<VictimIndex::Candidate> VictimIndex::Cursor::next() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Worse{});
    const Item item = heap_.back();
    heap_.pop_back();
    const TaskTreap& tasks = index_->classes_[item.class_id]->tasks;
    const VictimRule& rule = *rules_[item.class_id];
    switch (item.kind) {
      case Kind::kPrefix:
        tasks.cover_prefix([&](double priority) { return delta_qualifies(rule, incoming_priority_, priority); },
                           [&](std::uint32_t node) { push_node(item.class_id, node, Kind::kWhole); },
                           [&](std::uint32_t node) { push_node(item.class_id, node, Kind::kOne); });
        continue;
      case Kind::kWhole: {
        // Walk straight down to the task attaining the subtree's bound, leaving the parts
        // passed by in the heap: one push per level instead of three pushes and a pop.
        std::uint32_t n = item.node;
        while (true) {
          const auto self = bound_of(rule, incoming_priority_, kappa_now_, TaskTreap::single(tasks.entry(n)));
          const std::uint32_t l = tasks.left(n), r = tasks.right(n);
          std::optional<std::pair<double, std::uint64_t>> lb, rb;
          if (l != TaskTreap::kNil) lb = bound_of(rule, incoming_priority_, kappa_now_, tasks.aggregate(l));
          if (r != TaskTreap::kNil) rb = bound_of(rule, incoming_priority_, kappa_now_, tasks.aggregate(r));
          auto better = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
          const bool go_left = lb && !better(self, *lb) && (!rb || !better(*rb, *lb));
          const bool go_right = !go_left && rb && better(*rb, self);
          if (!go_left && !go_right) {
            if (l != TaskTreap::kNil) push(item.class_id, l, Kind::kWhole, tasks.aggregate(l));
            if (r != TaskTreap::kNil) push(item.class_id, r, Kind::kWhole, tasks.aggregate(r));
            if (rule.needs_min_score && self.first < min_score_) break;
            return Candidate{tasks.entry(n).seq, self.first, rule.reason, item.class_id};
          }
          push(item.class_id, n, Kind::kOne, TaskTreap::single(tasks.entry(n)));
          const std::uint32_t other = go_left ? r : l;
          if (other != TaskTreap::kNil) push(item.class_id, other, Kind::kWhole, tasks.aggregate(other));
          n = go_left ? l : r;
        }
        continue;
      }
      case Kind::kOne:
        if (rule.needs_min_score && item.value < min_score_) continue;
        return Candidate{tasks.entry(item.node).seq, item.value, rule.reason, item.class_id};
    }
  }
  return std::nullopt;
}

VictimIndex::Evaluation VictimIndex::evaluate(const IncomingTask& incoming, double now, std::size_t k) {
  Evaluation out;
  Cursor cursor = open(incoming, now, [](const Class&) { return true; }, &out.eligible);
  while (out.best.size() < k) {
    auto candidate = cursor.next();
    if (!candidate) break;
    out.best.push_back(*candidate);
  }
  return out;
}

std::vector<std::string> VictimIndex::check_invariants() const {
  std::vector<std::string> problems;
  std::size_t in_classes = 0;
  for (const auto& c : classes_) in_classes += c->tasks.size();
  if (in_classes + young_.size() != slots_.size()) {
    problems.push_back("victim index holds " + std::to_string(in_classes) + " mature and " +
                       std::to_string(young_.size()) + " young tasks for " + std::to_string(slots_.size()) +
                       " registered");
  }
  return problems;
}

}  // namespace meshsim::scheduler
