// The host-memory KV tier's store (HostKvStore): vLLM's own CPU offloading tests replayed
// op by op (tests/sim/vllm_conformance/cpu_offload.json), and LRU against a plainly written
// twin on random stores, loads, touches and failed copies.
#include "sim/batching/host_kv_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/test_paths.hpp"

namespace meshsim::cluster {
namespace {

using nlohmann::json;

json fixture() {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/tests/sim/vllm_conformance/cpu_offload.json";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return json::parse(in);
}

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

// LRU as a list scanned from its oldest end: what HostKvStore must do, slots included.
class SlowLru {
 public:
  explicit SlowLru(std::uint32_t capacity) : capacity_(capacity) {}
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
      const auto at = std::find_if(order_.begin(), order_.end(), [&](const Entry& e) { return e.hash == *it; });
      if (at == order_.end()) continue;
      const Entry e = *at;
      order_.erase(at);
      order_.push_back(e);
    }
  }
  std::optional<HostKvStore::StorePlan> prepare_store(const std::vector<std::uint64_t>& hs) {
    HostKvStore::StorePlan plan;
    for (const auto h : hs) {
      if (find(h) == nullptr && std::find(plan.to_store.begin(), plan.to_store.end(), h) == plan.to_store.end()) {
        plan.to_store.push_back(h);
      }
    }
    const std::size_t free = free_.size() + capacity_ - allocated_;
    if (plan.to_store.size() > free) {
      std::vector<std::uint64_t> victims;
      for (const Entry& e : order_) {
        if (victims.size() == plan.to_store.size() - free) break;
        if (e.readers == 0 && std::find(hs.begin(), hs.end(), e.hash) == hs.end()) victims.push_back(e.hash);
      }
      if (victims.size() < plan.to_store.size() - free) return std::nullopt;
      for (const auto v : victims) {
        const auto at = std::find_if(order_.begin(), order_.end(), [&](const Entry& e) { return e.hash == v; });
        free_.push_back(at->slot);
        order_.erase(at);
      }
      plan.evicted = victims;
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
      order_.push_back({h, slot, -1});
    }
    return plan;
  }
  void complete_store(const std::vector<std::uint64_t>& hs, bool success) {
    for (const auto h : hs) {
      const auto at = std::find_if(order_.begin(), order_.end(), [&](const Entry& e) { return e.hash == h; });
      if (at == order_.end() || at->readers >= 0) continue;
      if (success) {
        at->readers = 0;
      } else {
        free_.push_back(at->slot);
        order_.erase(at);
      }
    }
  }
  void load(const std::vector<std::uint64_t>& hs, int delta) {
    for (const auto h : hs) const_cast<Entry*>(find(h))->readers += delta;
  }

 private:
  const Entry* find(std::uint64_t h) const {
    for (const Entry& e : order_) {
      if (e.hash == h) return &e;
    }
    return nullptr;
  }
  std::uint32_t capacity_;
  std::uint32_t allocated_ = 0;
  std::vector<std::uint32_t> free_;
  std::vector<Entry> order_;
};

TEST(HostKvStoreTest, LruAgreesWithASlowTwinOnRandomOperations) {
  std::uint64_t evictions = 0, refusals = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(trial) + 3);
    const auto pick = [&](std::uint64_t n) { return rng() % n; };
    const std::uint32_t capacity = 1 + static_cast<std::uint32_t>(pick(12));
    HostKvStore store(capacity, HostEviction::kLru);
    SlowLru twin(capacity);
    std::vector<std::vector<std::uint64_t>> pending_stores, pending_loads;
    const auto some = [&]() {
      std::vector<std::uint64_t> hs;
      for (std::uint64_t n = 1 + pick(5); n > 0; --n) hs.push_back(pick(20));
      return hs;
    };
    for (int op = 0; op < 300; ++op) {
      const std::string where = "trial " + std::to_string(trial) + " op " + std::to_string(op);
      const std::uint64_t kind = pick(6);
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
      } else {
        const auto hs = some();
        store.touch(hs);
        twin.touch(hs);
      }
      ASSERT_LE(store.stored(), capacity) << where;
    }
  }
  EXPECT_GT(evictions, 1000u);
  EXPECT_GT(refusals, 100u);
}

}  // namespace
}  // namespace meshsim::cluster
