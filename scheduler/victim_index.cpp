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
  const double value = preempt_score(rule, incoming_priority, kappa_now, agg.terms);
  std::uint64_t seq = std::numeric_limits<std::uint64_t>::max();
  for (int i = 0; i < 4; ++i) {
    if (terms[i] == value) seq = std::min(seq, seqs[i]);
  }
  return {value, seq};
}

}  // namespace

void VictimIndex::configure(const PreemptionPolicy& policy) {
  auto keys = rule_keys_of(policy);
  if (policy.remaining_time_weight == kappa_ && policy.min_runtime_before_preemption == min_runtime_ &&
      keys == rule_keys_) {
    return;
  }
  kappa_ = policy.remaining_time_weight;
  min_runtime_ = policy.min_runtime_before_preemption;
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
  for (auto& info : infos) add(std::move(info), latest - min_runtime_ - 1.0);
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
  classes_[slot.class_id]->tasks.insert({score_terms(kappa_, info.priority, info.deadline), info.seq});
  slot.young = false;
}

void VictimIndex::add(TaskInfo info, double now) {
  const std::uint64_t seq = info.seq;
  Slot slot{std::move(info), 0, true, {}};
  slot.class_id = class_for(slot.info);
  auto [it, inserted] = slots_.emplace(seq, std::move(slot));
  if (!inserted) return;
  Slot& stored = it->second;
  if (now - stored.info.start >= min_runtime_) {
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
  while (!young_.empty() && now - young_.begin()->first >= min_runtime_) {
    Slot& slot = slots_.at(young_.begin()->second);
    young_.erase(young_.begin());
    insert_mature(slot);
  }
}

std::vector<std::optional<VictimRule>> VictimIndex::rules_for(const PreemptionPolicy& policy,
                                                              const IncomingTask& incoming) const {
  std::vector<std::optional<VictimRule>> rules;
  rules.reserve(classes_.size());
  for (const auto& c : classes_) {
    rules.push_back(c->tasks.size() == 0 ? std::nullopt : victim_rule(policy, incoming, c->pool, c->labels));
  }
  return rules;
}

VictimIndex::Cursor VictimIndex::open(const PreemptionPolicy& policy, const IncomingTask& incoming, double now,
                                      const std::function<bool(const Class&)>& wanted) {
  mature(now);
  Cursor cursor;
  cursor.index_ = this;
  cursor.incoming_priority_ = incoming.priority;
  cursor.kappa_now_ = kappa_ * now;
  cursor.min_score_ = policy.min_preempt_score;
  cursor.rules_ = rules_for(policy, incoming);
  for (std::uint32_t id = 0; id < classes_.size(); ++id) {
    const auto& rule = cursor.rules_[id];
    if (!rule || !wanted(*classes_[id])) continue;
    const double p = incoming.priority;
    classes_[id]->tasks.cover_prefix([&](double priority) { return delta_qualifies(*rule, p, priority); },
                                     [&](std::uint32_t node) { cursor.push(id, node, true); },
                                     [&](std::uint32_t node) { cursor.push(id, node, false); });
  }
  return cursor;
}

void VictimIndex::Cursor::push(std::uint32_t class_id, std::uint32_t node, bool whole) {
  const TaskTreap& tasks = index_->classes_[class_id]->tasks;
  const auto agg = whole ? tasks.aggregate(node) : TaskTreap::single(tasks.entry(node));
  const auto [value, seq] = bound_of(*rules_[class_id], incoming_priority_, kappa_now_, agg);
  heap_.push_back(Item{value, seq, class_id, node, whole});
  std::push_heap(heap_.begin(), heap_.end(), Worse{});
}

std::optional<VictimIndex::Candidate> VictimIndex::Cursor::next() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Worse{});
    const Item item = heap_.back();
    heap_.pop_back();
    const TaskTreap& tasks = index_->classes_[item.class_id]->tasks;
    if (item.whole) {
      push(item.class_id, item.node, false);
      if (tasks.left(item.node) != TaskTreap::kNil) push(item.class_id, tasks.left(item.node), true);
      if (tasks.right(item.node) != TaskTreap::kNil) push(item.class_id, tasks.right(item.node), true);
      continue;
    }
    const VictimRule& rule = *rules_[item.class_id];
    if (rule.needs_min_score && item.value < min_score_) continue;
    return Candidate{tasks.entry(item.node).seq, item.value, rule.reason, item.class_id};
  }
  return std::nullopt;
}

VictimIndex::Evaluation VictimIndex::evaluate(const PreemptionPolicy& policy, const IncomingTask& incoming, double now,
                                              std::size_t k) {
  Evaluation out;
  Cursor cursor = open(policy, incoming, now, [](const Class&) { return true; });
  const double p = incoming.priority;
  const double kappa_now = kappa_ * now;
  for (std::uint32_t id = 0; id < classes_.size(); ++id) {
    const auto& rule = cursor.rules_[id];
    if (!rule) continue;
    const TaskTreap& tasks = classes_[id]->tasks;
    auto qualifies = [&](double priority) { return delta_qualifies(*rule, p, priority); };
    // score >= delta, so a delta that reaches min_preempt_score settles it; only the band
    // between the rule's floor and min_preempt_score needs each task's score.
    auto reaches_min = [&](double priority) {
      return qualifies(priority) && (!rule->needs_min_score || p - priority >= policy.min_preempt_score);
    };
    out.eligible += tasks.count_prefix(reaches_min);
    if (rule->needs_min_score) {
      tasks.for_each_between(qualifies, reaches_min, [&](const TaskTreap::Entry& entry) {
        if (preempt_score(*rule, p, kappa_now, entry.terms) >= policy.min_preempt_score) ++out.eligible;
      });
    }
  }
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
