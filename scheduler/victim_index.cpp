#include "scheduler/victim_index.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::scheduler {
namespace {

std::set<std::string> rule_keys_of(const PreemptionPolicy& policy) {
  std::set<std::string> keys;
  for (const auto& [key, rules] : policy.label_preemption_rules) keys.insert(key);
  return keys;
}

}  // namespace

void VictimIndex::configure(const PreemptionPolicy& policy) {
  auto keys = rule_keys_of(policy);
  // Bucket summaries depend on kappa; with kappa 0 deadlines do not count, so every task
  // is filed as past its deadline (ties oldest first).
  const bool same_layout = policy.min_runtime_before_preemption == policy_.min_runtime_before_preemption &&
                           keys == rule_keys_ && policy.remaining_time_weight == policy_.remaining_time_weight &&
                           !classes_.empty();
  policy_ = policy;
  rules_cache_.clear();
  if (same_layout) return;
  rule_keys_ = std::move(keys);
  // Rebuild: the classes or the young queue depend on what changed.
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
  deadlines_.clear();
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
  const bool gives_back = !info.freed.is_zero();
  // Looked up by reference: every task's start asks, and copying the key allocated.
  const auto it = class_ids_.find(std::tie(info.pool, labels, gives_back));
  if (it != class_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(classes_.size());
  class_ids_.emplace(std::make_tuple(info.pool, labels, gives_back), id);
  classes_.push_back(std::make_unique<Class>(Class{info.pool, std::move(labels), gives_back, 0, {}, {}, 0}));
  return id;
}

void VictimIndex::refresh_bucket(Class& c, double priority) {
  const auto it = c.buckets.find(priority);
  if (it == c.buckets.end()) return;
  Bucket& bucket = it->second;
  if (bucket.size() == 0) {
    c.tree.erase(priority);
    c.buckets.erase(it);
    return;
  }
  if (bucket.ahead.empty()) bucket.ahead_seq_floor = kNoSeq;
  const double latest = bucket.ahead.empty() ? BucketTreap::kNone : -bucket.ahead.begin()->first;
  c.tree.upsert({priority, latest,
                 bucket.ahead.empty() ? BucketTreap::kNone : policy_.remaining_time_weight * latest - priority,
                 std::min(bucket.past.empty() ? kNoSeq : *bucket.past.begin(), bucket.ahead_seq_floor),
                 static_cast<std::uint32_t>(bucket.size())});
}

void VictimIndex::insert_mature(Slot& slot, double now) {
  const TaskInfo& info = slot.info;
  Class& c = *classes_[slot.class_id];
  Bucket& bucket = c.buckets[info.priority];
  slot.ahead = info.deadline > now && policy_.remaining_time_weight > 0;
  if (slot.ahead) {
    bucket.ahead.emplace(-info.deadline, info.seq);
    bucket.ahead_seq_floor = std::min(bucket.ahead_seq_floor, info.seq);
    slot.deadline_at = deadlines_.emplace(info.deadline, info.seq);
  } else {
    bucket.past.insert(info.seq);
  }
  slot.young = false;
  ++c.tasks;
  refresh_bucket(c, info.priority);
}

void VictimIndex::erase_mature(Slot& slot) {
  const TaskInfo& info = slot.info;
  Class& c = *classes_[slot.class_id];
  Bucket& bucket = c.buckets.at(info.priority);
  if (slot.ahead) {
    bucket.ahead.erase({-info.deadline, info.seq});
    deadlines_.erase(slot.deadline_at);
  } else {
    bucket.past.erase(info.seq);
  }
  --c.tasks;
  refresh_bucket(c, info.priority);
}

void VictimIndex::add(TaskInfo info, double now) {
  const std::uint64_t seq = info.seq;
  Slot slot{std::move(info), 0, true, {}, false, {}};
  slot.class_id = class_for(slot.info);
  auto& most = classes_[slot.class_id]->most_gpu_freed_on_a_node_milli;
  most = std::max(most, slot.info.gpu_freed_on_a_node_milli);
  auto [it, inserted] = slots_.emplace(seq, std::move(slot));
  if (!inserted) return;
  Slot& stored = it->second;
  if (now - stored.info.start >= policy_.min_runtime_before_preemption) {
    insert_mature(stored, now);
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
    erase_mature(slot);
  }
  slots_.erase(it);
}

void VictimIndex::advance_to(double now) {
  while (!young_.empty() && now - young_.begin()->first >= policy_.min_runtime_before_preemption) {
    Slot& slot = slots_.at(young_.begin()->second);
    young_.erase(young_.begin());
    insert_mature(slot, now);
  }
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    Slot& slot = slots_.at(deadlines_.begin()->second);
    deadlines_.erase(deadlines_.begin());
    Class& c = *classes_[slot.class_id];
    Bucket& bucket = c.buckets.at(slot.info.priority);
    bucket.ahead.erase({-slot.info.deadline, slot.info.seq});
    bucket.past.insert(slot.info.seq);
    slot.ahead = false;
    // Only the bucket's latest deadline is summarised: it changes when `ahead` empties.
    if (bucket.ahead.empty()) refresh_bucket(c, slot.info.priority);
  }
}

const std::vector<std::optional<VictimRule>>& VictimIndex::rules_for(const IncomingTask& incoming) {
  Labels rule_labels;
  for (const auto& key : rule_keys_) {
    if (const auto it = incoming.labels.find(key); it != incoming.labels.end()) rule_labels.emplace(key, it->second);
  }
  if (rules_cache_.size() > 4096) rules_cache_.clear();  // bounded: distinct incoming kinds are few
  // Looked up by reference: every victim search asks, and copying the key allocated.
  auto cached = rules_cache_.find(std::tie(incoming.pool, rule_labels));
  if (cached == rules_cache_.end()) {
    cached = rules_cache_.emplace(std::make_tuple(incoming.pool, rule_labels), std::vector<std::optional<VictimRule>>{}).first;
  }
  auto& rules = cached->second;
  const IncomingTask projected{incoming.priority, incoming.pool, std::move(rule_labels)};
  while (rules.size() < classes_.size()) {
    const Class& c = *classes_[rules.size()];
    rules.push_back(victim_rule(policy_, projected, c.pool, c.labels));
  }
  return rules;
}

VictimIndex::Cursor VictimIndex::open(const IncomingTask& incoming, double now,
                                      const std::function<bool(const Class&)>& wanted, std::size_t* eligible) {
  advance_to(now);
  Cursor cursor;
  cursor.index_ = this;
  cursor.incoming_priority_ = incoming.priority;
  cursor.kappa_ = policy_.remaining_time_weight;
  cursor.now_ = now;
  cursor.min_score_ = policy_.min_preempt_score;
  cursor.rules_ = &rules_for(incoming);
  cursor.heap_.reserve(classes_.size() + 8);
  const double p = incoming.priority;
  for (std::uint32_t id = 0; id < classes_.size(); ++id) {
    const auto& rule = (*cursor.rules_)[id];
    const Class& c = *classes_[id];
    if (!rule || c.tasks == 0 || !wanted(c)) continue;
    auto qualifies = [&](double priority) { return delta_qualifies(*rule, p, priority); };
    const BucketTreap::Aggregate prefix = c.tree.aggregate_prefix(qualifies);
    if (prefix.tasks == 0) continue;
    cursor.push_bound(id, BucketTreap::kNil, Cursor::Kind::kPrefix, prefix);
    if (eligible == nullptr) continue;
    // score >= delta, so where the rule's floor reaches min_preempt_score every task of
    // the prefix counts; otherwise the buckets between the two need their tasks' scores
    // (only deadlines ahead can lift a score there).
    if (!rule->needs_min_score || rule->delta_floor >= policy_.min_preempt_score) {
      *eligible += prefix.tasks;
      continue;
    }
    auto reaches_min = [&](double priority) { return qualifies(priority) && p - priority >= policy_.min_preempt_score; };
    *eligible += c.tree.aggregate_prefix(reaches_min).tasks;
    c.tree.for_each_between(qualifies, reaches_min, [&](const BucketTreap::Entry& entry) {
      for (const auto& [neg_deadline, seq] : c.buckets.at(entry.priority).ahead) {
        if (cursor.score(id, entry.priority, -neg_deadline) < policy_.min_preempt_score) break;
        ++*eligible;
      }
    });
  }
  return cursor;
}

double VictimIndex::Cursor::score(std::uint32_t class_id, double priority, double deadline) const {
  return preempt_score(*(*rules_)[class_id], incoming_priority_, priority, kappa_, deadline, now_);
}

void VictimIndex::Cursor::push_bound(std::uint32_t class_id, std::uint32_t node, Kind kind,
                                     const BucketTreap::Aggregate& agg) {
  // No task of the set can score more. In exact arithmetic each bucket's best is
  //   max(p - q + kappa (d - now), floor + kappa (d - now))  with d ahead, else max(p - q, floor),
  // so the set's best is bounded by the maxima of kappa d - q, -q and d. Rounding could
  // put that a hair below a task's computed score, so the bound is raised a little: a
  // bound is only ever allowed to be high.
  const VictimRule& rule = *(*rules_)[class_id];
  const double kappa_now = kappa_ * now_;
  double value = std::max(incoming_priority_ - agg.min_priority, rule.score_floor);
  if (agg.lead != BucketTreap::kNone) {
    value = std::max(value, incoming_priority_ + (agg.lead - kappa_now));
    value = std::max(value, rule.score_floor + kappa_ * (agg.latest_deadline - now_));
  }
  value += 1e-9 * (1.0 + std::abs(value));
  heap_.push_back(Item{value, agg.min_seq, class_id, node, kind});
  std::push_heap(heap_.begin(), heap_.end(), Worse{});
}

void VictimIndex::Cursor::push_bucket(std::uint32_t class_id, std::uint32_t node) {
  const Class& c = *index_->classes_[class_id];
  const double priority = c.tree.entry(node).priority;
  const Bucket& bucket = c.buckets.at(priority);
  walkers_.push_back(Walker{&bucket, priority, bucket.ahead.begin(), bucket.past.begin()});
  push_task(class_id, static_cast<std::uint32_t>(walkers_.size() - 1));
}

void VictimIndex::Cursor::push_task(std::uint32_t class_id, std::uint32_t walker) {
  const Walker& w = walkers_[walker];
  double value;
  std::uint64_t seq;
  if (w.ahead != w.bucket->ahead.end()) {
    value = score(class_id, w.priority, -w.ahead->first);
    seq = w.ahead->second;
  } else if (w.past != w.bucket->past.end()) {
    value = score(class_id, w.priority, BucketTreap::kNone);
    seq = *w.past;
  } else {
    return;
  }
  heap_.push_back(Item{value, seq, class_id, walker, Kind::kTask});
  std::push_heap(heap_.begin(), heap_.end(), Worse{});
}

std::optional<VictimIndex::Candidate> VictimIndex::Cursor::next() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Worse{});
    const Item item = heap_.back();
    heap_.pop_back();
    const Class& c = *index_->classes_[item.class_id];
    const VictimRule& rule = *(*rules_)[item.class_id];
    switch (item.kind) {
      case Kind::kPrefix:
        c.tree.cover_prefix([&](double priority) { return delta_qualifies(rule, incoming_priority_, priority); },
                            [&](std::uint32_t node) { push_bound(item.class_id, node, Kind::kWhole, c.tree.aggregate(node)); },
                            [&](std::uint32_t node) { push_bucket(item.class_id, node); });
        continue;
      case Kind::kWhole:
        push_bucket(item.class_id, item.node);
        if (c.tree.left(item.node) != BucketTreap::kNil) {
          push_bound(item.class_id, c.tree.left(item.node), Kind::kWhole, c.tree.aggregate(c.tree.left(item.node)));
        }
        if (c.tree.right(item.node) != BucketTreap::kNil) {
          push_bound(item.class_id, c.tree.right(item.node), Kind::kWhole, c.tree.aggregate(c.tree.right(item.node)));
        }
        continue;
      case Kind::kTask: {
        // Scores only fall within a bucket: a task below the minimum ends it.
        if (rule.needs_min_score && item.value < min_score_) continue;
        Walker& w = walkers_[item.node];
        if (w.ahead != w.bucket->ahead.end()) {
          ++w.ahead;
        } else {
          ++w.past;
        }
        push_task(item.class_id, item.node);
        return Candidate{item.seq, item.value, rule.reason, item.class_id};
      }
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
  for (const auto& c : classes_) in_classes += c->tasks;
  if (in_classes + young_.size() != slots_.size()) {
    problems.push_back("victim index holds " + std::to_string(in_classes) + " mature and " +
                       std::to_string(young_.size()) + " young tasks for " + std::to_string(slots_.size()) +
                       " registered");
  }
  return problems;
}

}  // namespace meshsim::scheduler
