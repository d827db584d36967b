// The host-memory KV tier's store (HostKvStore): vLLM's own CPU offloading tests replayed
// op by op (tests/sim/vllm_conformance/cpu_offload.json), and LRU and ARC against a plainly written
// twin of each policy on random stores, loads, touches and failed copies.
#include "sim/batching/host_kv_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/sim/vllm_conformance/fixture.hpp"

namespace meshsim::cluster {
namespace {

using nlohmann::json;

json fixture() { return testing::conformance_fixture("cpu_offload.json"); }

std::vector<std::uint64_t> hashes(const json& list) { return list.get<std::vector<std::uint64_t>>(); }

void check_arc(const HostKvStore& store, const json& want, const std::string& where) {
  if (want.contains("t1")) {
    EXPECT_EQ(store.t1_size(), want["t1"].get<std::size_t>()) << where;
  }
  if (want.contains("t2")) {
    EXPECT_EQ(store.t2_size(), want["t2"].get<std::size_t>()) << where;
  }
  for (const std::uint64_t h : hashes(want.value("in_t1", json::array()))) EXPECT_TRUE(store.in_t1(h)) << where << " " << h;
  for (const std::uint64_t h : hashes(want.value("in_t2", json::array()))) EXPECT_TRUE(store.in_t2(h)) << where << " " << h;
  for (const std::uint64_t h : hashes(want.value("not_in_t1", json::array()))) EXPECT_FALSE(store.in_t1(h)) << where;
  for (const std::uint64_t h : hashes(want.value("not_in_t2", json::array()))) EXPECT_FALSE(store.in_t2(h)) << where;
  for (const std::uint64_t h : hashes(want.value("in_b1", json::array()))) EXPECT_TRUE(store.in_ghost_b1(h)) << where << " " << h;
  if (want.contains("ghosts_at_most")) {
    EXPECT_LE(store.ghost_b1_size(), want["ghosts_at_most"].get<std::size_t>()) << where;
    EXPECT_LE(store.ghost_b2_size(), want["ghosts_at_most"].get<std::size_t>()) << where;
  }
  if (want.contains("target_above")) {
    EXPECT_GT(store.arc_target_t1(), want["target_above"].get<double>()) << where;
  }
}

void play(HostKvStore& store, const json& op, const std::string& where) {
  if (op.contains("prepare_store")) {
    const auto plan = store.prepare_store(hashes(op["prepare_store"]));
    if (!op.contains("expect")) return;
    const json& want = op["expect"];
    if (want.is_null()) {
      EXPECT_FALSE(plan) << where << ": expected the store refused";
      return;
    }
    ASSERT_TRUE(plan) << where << ": refused";
    if (want.contains("to_store")) {
      EXPECT_EQ(plan->to_store, hashes(want["to_store"])) << where;
    }
    if (want.contains("slots")) {
      EXPECT_EQ(plan->slots, want["slots"].get<std::vector<std::uint32_t>>()) << where;
    }
    if (want.contains("evicted")) {
      EXPECT_EQ(plan->evicted, hashes(want["evicted"])) << where;
    }
    if (want.contains("evicted_at_least")) {
      EXPECT_GE(plan->evicted.size(), want["evicted_at_least"].get<std::size_t>()) << where;
    }
  } else if (op.contains("complete_store")) {
    store.complete_store(hashes(op["complete_store"]), op.value("success", true));
  } else if (op.contains("lookup")) {
    EXPECT_EQ(store.lookup(hashes(op["lookup"])), op["expect"].get<std::uint32_t>()) << where;
  } else if (op.contains("prepare_load")) {
    EXPECT_EQ(store.prepare_load(hashes(op["prepare_load"])), op["expect"].get<std::vector<std::uint32_t>>()) << where;
  } else if (op.contains("complete_load")) {
    store.complete_load(hashes(op["complete_load"]));
  } else if (op.contains("touch")) {
    store.touch(hashes(op["touch"]));
  } else if (op.contains("set_arc_target")) {
    store.set_arc_target_t1(op["set_arc_target"].get<double>());
  } else if (op.contains("arc")) {
    check_arc(store, op["arc"], where);
  } else {
    ADD_FAILURE() << where << ": unknown op " << op.dump();
  }
}

TEST(HostKvStoreTest, VllmsCpuOffloadingTestsPlayOpByOp) {
  const json cases = fixture().at("cases");
  std::set<std::string> ids;
  for (const json& c : cases) {
    ids.insert(c.at("id").get<std::string>());
    const std::string name = c.at("id").get<std::string>() + " (" + c.at("test").get<std::string>() + " @" +
                             c.at("commit").get<std::string>().substr(0, 8) + ")";
    const auto policy = kHostEvictionNames.parse(c.at("policy").get<std::string>());
    ASSERT_TRUE(policy) << name;
    HostKvStore store(c.at("capacity").get<std::uint32_t>(), *policy);
    const json& ops = c.at("ops");
    for (std::size_t i = 0; i < ops.size(); ++i) play(store, ops[i], name + ", op " + std::to_string(i + 1));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"O1", "O2"}));  // the spec's host-memory cases
}

// LRU and ARC as vectors scanned from their oldest ends: what HostKvStore must do, slots,
// ghosts and ARC's target included.
class SlowStore {
 public:
  SlowStore(std::uint32_t capacity, HostEviction policy) : capacity_(capacity), arc_(policy == HostEviction::kArc) {}
  struct Entry {
    std::uint64_t hash;
    std::uint32_t slot;
    int readers;  // -1 while being stored
  };
  std::uint32_t lookup(const std::vector<std::uint64_t>& hs) const {
    std::uint32_t n = 0;
    for (const auto h : hs) {
      const Entry* e = find(h);
      if (e == nullptr || e->readers < 0) break;
      ++n;
    }
    return n;
  }
  void touch(const std::vector<std::uint64_t>& hs) {
    for (auto it = hs.rbegin(); it != hs.rend(); ++it) {
      const std::uint64_t h = *it;
      for (std::vector<Entry>* list : {&t1_, &t2_}) {
        const auto at = std::find_if(list->begin(), list->end(), [&](const Entry& e) { return e.hash == h; });
        if (at == list->end()) continue;
        const Entry e = *at;
        list->erase(at);
        (arc_ && list == &t1_ && e.readers >= 0 ? t2_ : *list).push_back(e);
        break;
      }
      if (contains(b1_, h)) {
        target_ = std::min(target_ + std::max(1.0, double(b2_.size()) / double(b1_.size())), double(capacity_));
        remove(b1_, h);
        b1_.push_back(h);
      } else if (contains(b2_, h)) {
        target_ = std::max(target_ - std::max(1.0, double(b1_.size()) / double(b2_.size())), 0.0);
        remove(b2_, h);
        b2_.push_back(h);
      }
    }
  }
  std::optional<HostKvStore::StorePlan> prepare_store(const std::vector<std::uint64_t>& hs) {
    HostKvStore::StorePlan plan;
    for (const auto h : hs) {
      if (find(h) == nullptr && !contains(plan.to_store, h)) plan.to_store.push_back(h);
    }
    const std::size_t free = free_.size() + capacity_ - allocated_;
    if (plan.to_store.size() > free) {
      const auto evictable = [&](const Entry& e) {
        return e.readers == 0 && !contains(hs, e.hash) && !contains(plan.evicted, e.hash);
      };
      std::size_t from_t1 = 0;
      while (plan.evicted.size() < plan.to_store.size() - free) {
        const Entry* victim = nullptr;
        if (!arc_ || t1_.size() - from_t1 >= static_cast<std::size_t>(target_)) {
          for (const Entry& e : t1_) {
            if (victim == nullptr && evictable(e)) victim = &e;
          }
          from_t1 += victim != nullptr;
        }
        if (victim == nullptr && arc_) {
          for (const Entry& e : t2_) {
            if (victim == nullptr && evictable(e)) victim = &e;
          }
        }
        if (victim == nullptr) return std::nullopt;
        plan.evicted.push_back(victim->hash);
      }
      for (const auto v : plan.evicted) {
        const bool in_t1 = contains_entry(t1_, v);
        std::vector<Entry>& list = in_t1 ? t1_ : t2_;
        const auto at = std::find_if(list.begin(), list.end(), [&](const Entry& e) { return e.hash == v; });
        free_.push_back(at->slot);
        list.erase(at);
        if (arc_) (in_t1 ? b1_ : b2_).push_back(v);
      }
      while (b1_.size() > capacity_) b1_.erase(b1_.begin());
      while (b2_.size() > capacity_) b2_.erase(b2_.begin());
    }
    for (const auto h : plan.to_store) {
      std::uint32_t slot;
      if (allocated_ < capacity_) {
        slot = allocated_++;
      } else {
        slot = free_.back();
        free_.pop_back();
      }
      plan.slots.push_back(slot);
      t1_.push_back({h, slot, -1});
      remove(b1_, h);
      remove(b2_, h);
    }
    return plan;
  }
  void complete_store(const std::vector<std::uint64_t>& hs, bool success) {
    for (const auto h : hs) {
      for (std::vector<Entry>* list : {&t1_, &t2_}) {
        const auto at = std::find_if(list->begin(), list->end(), [&](const Entry& e) { return e.hash == h; });
        if (at == list->end() || at->readers >= 0) continue;
        if (success) {
          at->readers = 0;
        } else {
          free_.push_back(at->slot);
          list->erase(at);
        }
      }
    }
  }
  void load(const std::vector<std::uint64_t>& hs, int delta) {
    for (const auto h : hs) const_cast<Entry*>(find(h))->readers += delta;
  }
  bool loading(std::uint64_t h) const { return find(h) != nullptr && find(h)->readers > 0; }

  // The same state as `store`, list by list (the order within lists shows in later plans).
  void expect_same(const HostKvStore& store, const std::string& where) const {
    EXPECT_EQ(store.t1_size(), t1_.size()) << where;
    EXPECT_EQ(store.t2_size(), t2_.size()) << where;
    EXPECT_EQ(store.ghost_b1_size(), b1_.size()) << where;
    EXPECT_EQ(store.ghost_b2_size(), b2_.size()) << where;
    EXPECT_EQ(store.arc_target_t1(), target_) << where;
    for (const Entry& e : t2_) EXPECT_TRUE(store.in_t2(e.hash)) << where;
    for (const auto h : b1_) EXPECT_TRUE(store.in_ghost_b1(h)) << where;
    for (const auto h : b2_) EXPECT_TRUE(store.in_ghost_b2(h)) << where;
  }

 private:
  static bool contains(const std::vector<std::uint64_t>& v, std::uint64_t h) {
    return std::find(v.begin(), v.end(), h) != v.end();
  }
  static bool contains_entry(const std::vector<Entry>& v, std::uint64_t h) {
    return std::any_of(v.begin(), v.end(), [&](const Entry& e) { return e.hash == h; });
  }
  static void remove(std::vector<std::uint64_t>& v, std::uint64_t h) { v.erase(std::remove(v.begin(), v.end(), h), v.end()); }
  const Entry* find(std::uint64_t h) const {
    for (const std::vector<Entry>* list : {&t1_, &t2_}) {
      for (const Entry& e : *list) {
        if (e.hash == h) return &e;
      }
    }
    return nullptr;
  }
  std::uint32_t capacity_;
  bool arc_;
  std::uint32_t allocated_ = 0;
  std::vector<std::uint32_t> free_;
  std::vector<Entry> t1_, t2_;
  std::vector<std::uint64_t> b1_, b2_;
  double target_ = 0.0;
};

class HostKvStoreTwinTest : public ::testing::TestWithParam<HostEviction> {};

TEST_P(HostKvStoreTwinTest, AgreesWithASlowTwinOnRandomOperations) {
  std::uint64_t evictions = 0, refusals = 0, ghost_hits = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) + 3);
    const auto pick = [&](std::uint64_t n) { return rng() % n; };
    const std::uint32_t capacity = 1 + static_cast<std::uint32_t>(pick(12));
    HostKvStore store(capacity, GetParam());
    SlowStore twin(capacity, GetParam());
    std::vector<std::vector<std::uint64_t>> pending_stores, pending_loads;
    const auto some = [&]() {
      std::vector<std::uint64_t> hs;
      for (std::uint64_t n = 1 + pick(5); n > 0; --n) hs.push_back(pick(20));
      return hs;
    };
    for (int op = 0; op < 300; ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      const std::uint64_t kind = pick(7);
      if (kind == 0) {
        const auto hs = some();
        const auto a = store.prepare_store(hs);
        const auto b = twin.prepare_store(hs);
        ASSERT_EQ(a.has_value(), b.has_value()) << where;
        if (!a) {
          ++refusals;
          continue;
        }
        ASSERT_EQ(a->to_store, b->to_store) << where;
        ASSERT_EQ(a->slots, b->slots) << where;
        ASSERT_EQ(a->evicted, b->evicted) << where;
        evictions += a->evicted.size();
        pending_stores.push_back(a->to_store);
      } else if (kind == 1 && !pending_stores.empty()) {
        const std::size_t i = pick(pending_stores.size());
        const bool success = pick(4) != 0;
        store.complete_store(pending_stores[i], success);
        twin.complete_store(pending_stores[i], success);
        pending_stores.erase(pending_stores.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (kind == 2) {
        const auto hs = some();
        ASSERT_EQ(store.lookup(hs), twin.lookup(hs)) << where;
        for (const auto h : hs) ASSERT_EQ(store.loading(h), twin.loading(h)) << where;
        const std::uint32_t hit = store.lookup(hs);
        if (hit > 0 && pick(2) == 0) {
          const std::vector<std::uint64_t> loaded(hs.begin(), hs.begin() + hit);
          store.prepare_load(loaded);
          twin.load(loaded, +1);
          pending_loads.push_back(loaded);
        }
      } else if (kind == 3 && !pending_loads.empty()) {
        const std::size_t i = pick(pending_loads.size());
        store.complete_load(pending_loads[i]);
        twin.load(pending_loads[i], -1);
        pending_loads.erase(pending_loads.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (kind == 4) {  // the tier's store: prepare, touch, complete at once
        const auto hs = some();
        const auto a = store.store_now(hs);
        const auto b = twin.prepare_store(hs);
        ASSERT_EQ(a.has_value(), b.has_value()) << where;
        if (!b || b->to_store.empty()) continue;
        ASSERT_EQ(*a, b->to_store.size()) << where;
        twin.touch(hs);
        twin.complete_store(b->to_store, true);
      } else {
        const auto hs = some();
        for (const auto h : hs) ghost_hits += store.in_ghost_b1(h) || store.in_ghost_b2(h);
        store.touch(hs);
        twin.touch(hs);
      }
      ASSERT_LE(store.stored(), capacity) << where;
      twin.expect_same(store, where);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(evictions, 1000u);
  EXPECT_GT(refusals, 100u);
  if (GetParam() == HostEviction::kArc) {
    EXPECT_GT(ghost_hits, 1000u);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, HostKvStoreTwinTest, ::testing::Values(HostEviction::kLru, HostEviction::kArc),
                         [](const auto& p) { return std::string(kHostEvictionNames.name(p.param)); });

}  // namespace
}  // namespace meshsim::cluster
