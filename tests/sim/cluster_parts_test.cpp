// The parts LlmCluster is built from, each alone: the timing of a step (StepSegment), the
// servers (ServerPool), the pools' ledger (PoolLedger), the instances' lifecycle
// (InstanceFleet) and the requests awaiting their first token (FirstTokenWatch). The fast ones are checked against slow twins on random
// operations; the whole cluster is checked in llm_cluster_property_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "sim/cluster/first_token_watch.hpp"
#include "sim/cluster/instance_fleet.hpp"
#include "sim/cluster/pool_ledger.hpp"
#include "sim/cluster/server_pool.hpp"
#include "sim/cluster/serving_hardware.hpp"
#include "sim/cluster/step_segment.hpp"

namespace meshsim::cluster {
namespace {

using engine::SimTime;

// Iterations that take 1 ms plus 1 µs per 100 KV tokens read: each is a different length.
struct LinearModel final : PerfModel {
  double prefill_ms(const PrefillWork& w) const override { return 5.0 + 0.01 * static_cast<double>(w.tokens); }
  double decode_ms(const DecodeWork& w) const override { return 1.0 + 1e-5 * static_cast<double>(w.context_tokens); }
  double iteration_ms(const PrefillWork& p, const DecodeWork& d) const override {
    return p.tokens > 0 ? prefill_ms(p) + (d.batch > 0 ? decode_ms(d) : 0.0) : decode_ms(d);
  }
};

LlmClusterConfig config_on(const std::string& sku, std::uint32_t gpus_per_node, std::uint32_t tp) {
  LlmClusterConfig config;
  config.model.parameters = 7e9;
  config.model.layers = 32;
  config.model.hidden = 4096;
  config.model.heads = 32;
  config.model.kv_heads = 32;
  config.sku.name = sku;
  config.sku.gpus_per_node = gpus_per_node;
  config.sku.hbm_gib_per_gpu = 80;
  config.sku.peak_tflops = 989;
  config.sku.hbm_tb_per_s = 3.35;
  config.sku.cost_per_hour = 10;
  config.tensor_parallel = tp;
  config.perf = std::make_shared<LinearModel>();
  return config;
}

TEST(StepSegmentTest, ACutEndsAtTheFirstBoundaryAtOrAfterNowAndKeepsWhatRan) {
  const ServingHardware hardware(config_on("h100", 8, 1));
  const InstanceHardware& hw = hardware.of(InstanceTag::kMixed);
  StepSegment segment;
  const SimTime start = SimTime::from_seconds(10);
  segment.begin_decode(hw, start, 4, 1000, 100);
  ASSERT_EQ(segment.iterations(), StepSegment::kFirstSegment) << "a first segment times only a few iterations";
  // Lengths as the model prices them, one by one.
  std::vector<SimTime> ends;
  SimTime t = start;
  for (std::uint32_t i = 0; i < segment.iterations(); ++i) {
    t += hw.iteration_time(PrefillWork{}, DecodeWork{4, 1000 + 4ull * i});
    ends.push_back(t);
  }
  EXPECT_EQ(segment.end(), ends.back());
  EXPECT_EQ(segment.begun(start), 1u);
  EXPECT_EQ(segment.begun(ends[2]), 3u) << "at a boundary the next iteration has not begun";
  EXPECT_EQ(segment.begun(ends[2] + SimTime::from_us(1)), 4u);
  const SimTime now = ends[4] - SimTime::from_us(1);
  const auto end = segment.cut(now);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, ends[4]);
  EXPECT_EQ(segment.iterations(), 5u);
  EXPECT_FALSE(segment.cut(now).has_value()) << "cut once";
  // The whole useful work of the iterations that ran, each priced alone.
  std::int64_t useful = 0;
  for (std::uint32_t i = 0; i < 5; ++i) {
    const DecodeWork d{4, 1000 + 4ull * i};
    useful += hw.useful_ns(PrefillWork{}, d, hw.iteration_time(PrefillWork{}, d));
  }
  EXPECT_EQ(segment.useful_ns(), useful);
  EXPECT_EQ(segment.useful_so_far(*end).whole_ns, useful);
  EXPECT_EQ(segment.useful_so_far(*end).partial_ns, 0.0);
}

TEST(StepSegmentTest, SegmentsThatRunWholeDoubleUpToTheFoldSegmentAndAPrefillIsNeverCut) {
  const ServingHardware hardware(config_on("h100", 8, 1));
  const InstanceHardware& hw = hardware.of(InstanceTag::kMixed);
  StepSegment segment;
  SimTime t;
  std::vector<std::uint32_t> caps;
  for (int k = 0; k < 7; ++k) {
    segment.begin_decode(hw, t, 2, 500, 100000);
    caps.push_back(segment.iterations());
    t = segment.end();
  }
  EXPECT_EQ(caps, (std::vector<std::uint32_t>{16, 32, 64, 128, 256, 256, 256}));
  segment.begin_prefill(hw, t, PrefillWork{.tokens = 1000, .sequences = 1}, DecodeWork{2, 500});
  EXPECT_EQ(segment.iterations(), 1u);
  EXPECT_FALSE(segment.cut(t).has_value());
  segment.begin_decode(hw, segment.end(), 2, 500, 100000);
  EXPECT_EQ(segment.iterations(), StepSegment::kFirstSegment) << "after a prefill it starts short again";
  segment.begin_decode(hw, segment.end(), 2, 500, 100000);
  EXPECT_EQ(segment.iterations(), 2 * StepSegment::kFirstSegment);
  segment.cut(segment.start() + SimTime::from_us(1));
  segment.begin_decode(hw, segment.end(), 2, 500, 100000);
  EXPECT_EQ(segment.iterations(), StepSegment::kFirstSegment) << "after a cut it starts short again";
}

TEST(ServingHardwareTest, PoolsOnOneSkuAndTpShareOneKindAndBadFiguresAreRefused) {
  LlmClusterConfig config = config_on("h100", 8, 2);
  config.pool_hardware.push_back(PoolHardware{InstanceTag::kToken, config_on("a100", 8, 2).sku, 2, config.perf, "test"});
  const ServingHardware hardware(config);
  EXPECT_EQ(hardware.kinds(), 2u);
  EXPECT_TRUE(hardware.same(InstanceTag::kPrompt, InstanceTag::kMixed));
  EXPECT_FALSE(hardware.same(InstanceTag::kPrompt, InstanceTag::kToken));
  EXPECT_EQ(hardware.of(InstanceTag::kToken).per_server, 4u);
  config = config_on("h100", 8, 3);
  EXPECT_THROW(ServingHardware{config}, std::logic_error) << "TP 3 does not divide 8 GPUs";
  config = config_on("h100", 8, 1);
  config.model.parameters = 1e12;  // 2 TB of weights on one 80 GiB GPU
  EXPECT_THROW(ServingHardware{config}, std::logic_error);
}

// ServerPool against a slow twin: a map of server -> (kind, load), walked for every answer.
TEST(ServerPoolTest, RandomAddsHoldsReleasesAndRemovesAgreeWithASlowTwin) {
  LlmClusterConfig config = config_on("h100", 8, 2);  // 4 instances per server
  config.pool_hardware.push_back(PoolHardware{InstanceTag::kToken, config_on("a100", 4, 2).sku, 2, config.perf, "test"});
  const ServingHardware hardware(config);
  int changes = 0;
  ServerPool pool(hardware, [&] { ++changes; });
  std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> twin;  // server -> (kind, load)
  std::mt19937_64 rng(7);
  const std::array tags{InstanceTag::kMixed, InstanceTag::kToken};
  for (int step = 0; step < 4000; ++step) {
    const InstanceTag tag = tags[rng() % 2];
    const std::uint32_t kind = hardware.index_of(tag);
    std::optional<std::uint32_t> want_room;
    for (const auto& [server, kl] : twin) {
      if (kl.first == kind && kl.second < hardware.kind(kind).per_server) {
        want_room = server;
        break;
      }
    }
    ASSERT_EQ(pool.with_room(tag), want_room) << "step " << step;
    switch (rng() % 4) {
      case 0: twin[pool.add(tag)] = {kind, 0}; break;
      case 1:
        if (want_room) {
          pool.hold(*want_room, tag);
          ++twin[*want_room].second;
        }
        break;
      case 2:
        for (auto& [server, kl] : twin) {
          if (kl.second > 0 && rng() % 3 == 0) {
            pool.release(server);
            --kl.second;
            break;
          }
        }
        break;
      case 3:
        for (auto it = twin.begin(); it != twin.end(); ++it) {
          if (it->second.second == 0) {
            pool.remove(it->first);
            twin.erase(it);
            break;
          }
        }
        break;
    }
    ASSERT_EQ(pool.count(), twin.size());
    double cost = 0;
    std::vector<std::uint32_t> held(pool.ids(), 0);
    for (const auto& [server, kl] : twin) {
      cost += hardware.kind(kl.first).sku.cost_per_hour;
      held[server] = kl.second;
      ASSERT_EQ(pool.load(server), kl.second);
    }
    ASSERT_DOUBLE_EQ(pool.cost_per_hour(), cost);
    ASSERT_TRUE(pool.check_invariants(held).empty());
  }
  EXPECT_GT(changes, 100);
  const auto full = pool.add(InstanceTag::kMixed);
  for (int i = 0; i < 4; ++i) pool.hold(full, InstanceTag::kMixed);
  EXPECT_THROW(pool.hold(full, InstanceTag::kMixed), std::logic_error);
  EXPECT_THROW(pool.hold(pool.add(InstanceTag::kMixed), InstanceTag::kToken), std::logic_error) << "another SKU";
  EXPECT_THROW(pool.remove(full), std::logic_error) << "a server holding instances stays";
}

TEST(PoolLedgerTest, CountsFirstInactiveAndTrackedLoadsFollowTheMoves) {
  PoolLedger ledger;
  for (std::uint32_t id = 0; id < 5; ++id) ledger.move(id, InstanceTag::kMixed, std::nullopt, InstanceState::kStarting);
  for (std::uint32_t id = 0; id < 5; ++id) ledger.move(id, InstanceTag::kMixed, InstanceState::kStarting, InstanceState::kActive);
  ledger.move(3, InstanceTag::kMixed, InstanceState::kActive, InstanceState::kInactive);
  ledger.move(1, InstanceTag::kMixed, InstanceState::kActive, InstanceState::kInactive);
  EXPECT_EQ(ledger.first_inactive(InstanceTag::kMixed), 1u);
  ledger.move(1, InstanceTag::kMixed, InstanceState::kInactive, std::nullopt);  // removed
  EXPECT_EQ(ledger.first_inactive(InstanceTag::kMixed), 3u);
  EXPECT_FALSE(ledger.first_inactive(InstanceTag::kToken).has_value());
  const auto counts = ledger.counts();
  EXPECT_EQ(counts.mixed, 4u);
  EXPECT_EQ(counts.active, 3u);
  EXPECT_EQ(counts.inactive, 1u);
  ledger.track_loads();
  ActiveLoad a, b;
  ledger.recount(InstanceTag::kMixed, a, ActiveLoad{3, 300});
  ledger.recount(InstanceTag::kMixed, b, ActiveLoad{2, 50});
  ledger.recount(InstanceTag::kMixed, a, ActiveLoad{1, 100});
  EXPECT_EQ(ledger.tracked_load(InstanceTag::kMixed).requests, 3);
  EXPECT_EQ(ledger.tracked_load(InstanceTag::kMixed).pending_tokens, 150);
  std::array<PoolTotals, 3> want{};
  want[static_cast<std::size_t>(InstanceTag::kMixed)] = ledger.totals(InstanceTag::kMixed);
  std::array<ActiveLoad, 3> walked{};
  walked[static_cast<std::size_t>(InstanceTag::kMixed)] = ActiveLoad{3, 150};
  EXPECT_TRUE(ledger.check_invariants(want, walked).empty());
  walked[static_cast<std::size_t>(InstanceTag::kMixed)] = ActiveLoad{3, 151};
  EXPECT_EQ(ledger.check_invariants(want, walked).size(), 1u);
}

// FirstTokenWatch against a slow twin: the requests waiting, walked for every backlog.
// Random lifecycle calls and load changes on a fleet of prompt and token instances, with
// no request and no cluster: after each, the fleet's books agree with its instances, its
// counts with a slow twin's, least_loaded with a walk, and every instance that became
// drained was reported exactly once; draining the last ACTIVE instance a pool needs is
// refused and changes nothing.
TEST(InstanceFleetTest, RandomLifecycleCallsKeepTheBooksAndAgreeWithASlowTwin) {
  struct NoSteps final : engine::EventHandler {
    void on_event(const engine::EventPayload&) override {}
  } steps;
  engine::Simulation sim(1);
  const LlmClusterConfig config = config_on("h100", 8, 2);
  Sequences seqs;
  InstanceFleet fleet(sim, config, steps, 0, [&](const InstanceHardware& hw) { return make_engine(hw.engine, hw.kv_capacity_tokens, seqs); });
  std::map<std::uint32_t, std::uint32_t> reports;  // by instance
  fleet.set_drained_listener([&](std::uint32_t id) { ++reports[id]; });
  std::map<std::uint32_t, std::pair<InstanceTag, InstanceState>> twin;  // existing instances
  std::mt19937 rng(7);
  const auto pick = [&](InstanceState state) -> std::optional<std::uint32_t> {
    std::vector<std::uint32_t> in_state;
    for (const auto& [id, s] : twin) {
      if (s.second == state) in_state.push_back(id);
    }
    if (in_state.empty()) return std::nullopt;
    return in_state[rng() % in_state.size()];
  };
  const auto place = [&](InstanceTag tag) {
    ServerPool& servers = fleet.servers();
    return servers.with_room(tag).value_or(servers.add(tag));
  };
  for (const InstanceTag tag : {InstanceTag::kPrompt, InstanceTag::kToken}) {
    const std::uint32_t id = fleet.add(tag, place(tag));
    fleet.activate(id);
    twin[id] = {tag, InstanceState::kActive};
  }
  std::uint32_t refused = 0;
  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng() % 8);
    if (op == 0) {
      const InstanceTag tag = rng() % 2 == 0 ? InstanceTag::kPrompt : InstanceTag::kToken;
      twin[fleet.add(tag, place(tag))] = {tag, InstanceState::kStarting};
    } else if (op == 1) {
      if (const auto id = pick(InstanceState::kStarting)) {
        fleet.activate(*id);
        twin[*id].second = InstanceState::kActive;
      }
    } else if (op == 2) {
      if (const auto id = pick(InstanceState::kActive)) {
        const auto before = fleet.pools().counts();
        if (fleet.drain(*id)) {
          twin[*id].second = InstanceState::kDraining;
        } else {
          ++refused;
          EXPECT_EQ(fleet.router(twin[*id].first).size(), 1u) << "only the last ACTIVE instance is kept";
          EXPECT_EQ(fleet.pools().counts().active, before.active);
        }
      }
    } else if (op == 3) {
      // Load comes and goes on ACTIVE instances; a DRAINING one's only goes (no routing
      // reaches it), and it is drained when none is left.
      const auto id = pick(rng() % 2 == 0 ? InstanceState::kActive : InstanceState::kDraining);
      if (id) {
        ServingInstance& in = fleet.at(*id);
        const bool draining = in.state == InstanceState::kDraining;
        in.requests = draining ? static_cast<std::int64_t>(rng() % (in.requests + 1)) : rng() % 3;
        in.pending_tokens = in.requests * (rng() % 500);
        in.kv_promised = in.pending_tokens;
        fleet.refresh_load(*id);
      }
    } else if (op == 4) {
      if (const auto id = pick(InstanceState::kDraining); id && fleet.drained(*id)) {
        const std::uint32_t server = fleet.deactivate(*id);
        if (fleet.servers().load(server) == 0) fleet.servers().remove(server);
        twin[*id].second = InstanceState::kInactive;
      }
    } else if (op == 5) {
      if (const auto id = pick(InstanceState::kInactive)) {
        fleet.restart(*id, place(twin[*id].first));
        twin[*id].second = InstanceState::kStarting;
      }
    } else if (op == 6) {
      const auto id = pick(rng() % 2 == 0 ? InstanceState::kInactive : InstanceState::kStarting);
      if (id) {
        if (const auto server = fleet.remove(*id); server && fleet.servers().load(*server) == 0) {
          fleet.servers().remove(*server);
        }
        twin.erase(*id);
      }
    } else if (const auto id = pick(InstanceState::kDraining); id && fleet.drained(*id)) {
      const InstanceTag to = twin[*id].first == InstanceTag::kPrompt ? InstanceTag::kToken : InstanceTag::kPrompt;
      fleet.retag(*id, to);
      twin[*id] = {to, InstanceState::kActive};
    }
    ASSERT_EQ(fleet.check_invariants(), std::vector<std::string>{}) << "after step " << step;
    for (const InstanceTag tag : {InstanceTag::kPrompt, InstanceTag::kToken}) {
      std::array<std::uint32_t, 4> by_state{};
      std::optional<std::uint32_t> least;
      std::int64_t least_load = 0;
      for (const auto& [id, s] : twin) {
        if (s.first != tag) continue;
        ++by_state[static_cast<std::size_t>(s.second)];
        const std::int64_t load = fleet.at(id).scale_down_load();
        if (s.second == InstanceState::kActive && (!least || load < least_load)) {
          least = id;
          least_load = load;
        }
      }
      for (std::size_t state = 0; state < 4; ++state) {
        ASSERT_EQ(fleet.pools().totals(tag).by_state[state], by_state[state]) << "step " << step;
      }
      ASSERT_EQ(fleet.least_loaded(tag), least) << "step " << step;
    }
    for (const auto& [id, s] : twin) {
      ASSERT_EQ(fleet.state_of(id), s.second);
      if (s.second == InstanceState::kDraining && fleet.drained(id)) {
        ASSERT_EQ(reports[id], 1u) << "instance " << id << " drained, reported once";
      }
    }
    for (auto& [id, count] : reports) {
      if (fleet.state_of(id) != InstanceState::kDraining) count = 0;  // a later drain reports again
    }
  }
  EXPECT_GT(refused, 0u) << "the walk tried to drain a last ACTIVE instance";
  EXPECT_EQ(fleet.counts().existing, twin.size());
}

TEST(FirstTokenWatchTest, RandomArrivalsTokensAndDeparturesAgreeWithASlowTwin) {
  FirstTokenWatch watch;
  std::map<std::uint32_t, SimTime> waiting;  // slot -> arrival
  std::set<std::uint32_t> used;
  std::vector<std::uint32_t> free_slots;
  std::uint32_t next_slot = 0;
  std::mt19937_64 rng(11);
  SimTime now;
  for (int step = 0; step < 20000; ++step) {
    now += SimTime::from_us(static_cast<std::int64_t>(rng() % 1000));
    const auto pick_used = [&]() -> std::optional<std::uint32_t> {
      if (used.empty()) return std::nullopt;
      auto it = used.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % std::min<std::size_t>(used.size(), 8)));
      return *it;
    };
    switch (rng() % 3) {
      case 0: {  // an arrival, into a reused slot when one is free
        std::uint32_t slot = next_slot;
        if (!free_slots.empty() && rng() % 2 == 0) {
          slot = free_slots.back();
          free_slots.pop_back();
        } else {
          ++next_slot;
        }
        watch.arrived(slot, now);
        waiting[slot] = now;
        used.insert(slot);
        break;
      }
      case 1:  // a first token (once or twice)
        if (const auto slot = pick_used()) {
          watch.done(*slot);
          waiting.erase(*slot);
        }
        break;
      case 2:  // a departure
        if (const auto slot = pick_used()) {
          watch.done(*slot);
          waiting.erase(*slot);
          used.erase(*slot);
          free_slots.push_back(*slot);
        }
        break;
    }
    ASSERT_EQ(watch.waiting(), waiting.size());
    if (step % 50 != 0) continue;
    const SimTime cutoff = now - SimTime::from_us(static_cast<std::int64_t>(rng() % 20000));
    std::vector<SimTime> recent;
    std::uint64_t before = 0;
    for (const auto& [slot, arrival] : waiting) {
      if (arrival >= cutoff) {
        recent.push_back(arrival);
      } else {
        ++before;
      }
    }
    std::sort(recent.begin(), recent.end());
    const auto backlog = watch.backlog(cutoff);
    ASSERT_EQ(backlog.recent, recent) << "step " << step;
    ASSERT_EQ(backlog.arrived_before, before);
  }
}

}  // namespace
}  // namespace meshsim::cluster
