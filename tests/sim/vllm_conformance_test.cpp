// vLLM's own scheduler tests, replayed step by step on VllmScheduler: each case of
// tests/sim/vllm_conformance/scheduler.json names the vLLM test and commit it was read
// from, the limits, the requests and what every step must schedule. Cases the engine does
// not play (speculative decoding, KV connectors, pipelined steps...) sit in the file's
// "differs" list with the reason, and every case the spec lists
// (../shared/spec/vllm-conformance.md) must be in one list or the other (the prefix-caching
// cases play in vllm_prefix_caching_conformance_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/batching/vllm_scheduler.hpp"
#include "tests/sim/vllm_conformance/fixture.hpp"

namespace meshsim::cluster {
namespace {

using nlohmann::json;

json fixture(const std::string& name = "scheduler.json") { return testing::conformance_fixture(name); }

struct Request {
  std::string id;
  std::uint32_t prompt_tokens = 0;
  std::uint32_t max_tokens = 0;
  VllmRank rank;  // priority and arrival (vLLM's seconds, in microseconds here)
};

std::vector<Request> requests_of(const json& spec) {
  std::vector<Request> out;
  if (spec.is_object()) {  // {"count": n, ...}: ids "0".."n-1", as vLLM's create_requests
    for (std::uint32_t i = 0; i < spec.at("count").get<std::uint32_t>(); ++i) {
      out.push_back({std::to_string(i), spec.at("prompt_tokens").get<std::uint32_t>(),
                     spec.at("max_tokens").get<std::uint32_t>(), VllmRank{}});
    }
    return out;
  }
  for (const json& r : spec) {
    const VllmRank rank{r.value("priority", 0),
                        static_cast<std::uint64_t>(std::llround(r.value("arrival", 0.0) * 1e6))};
    out.push_back({r.at("id").get<std::string>(), r.at("prompt_tokens").get<std::uint32_t>(),
                   r.at("max_tokens").get<std::uint32_t>(), rank});
  }
  return out;
}

// One case played on a VllmScheduler: requests by slot (their index in the case), the
// outputs each has, and the scheduler's state read back in ids.
class Player {
 public:
  explicit Player(const json& c) : requests_(requests_of(c.at("requests"))), scheduler_(limits(c), blocks(c)) {
    for (std::uint32_t slot = 0; slot < requests_.size(); ++slot) {
      // Request i's prompt is its own ([i] * n): no two share a prefix.
      streams_.emplace_back(slot, requests_[slot].prompt_tokens, std::vector<traces::ContentSegment>{}, 0);
      outputs_.push_back(0);
    }
  }

  void add(const std::string& id) {
    const std::uint32_t slot = slot_of(id);
    scheduler_.enqueue(slot, streams_[slot], requests_[slot].prompt_tokens, 0, requests_[slot].rank);
  }
  void add_all() {
    for (const Request& r : requests_) add(r.id);
  }

  const VllmScheduler::Step& schedule() { return scheduler_.schedule(); }

  // The step ran: chunks that sample gain an output; a request with max_tokens finishes.
  void complete() {
    const VllmScheduler::Step step = scheduler_.step();
    scheduler_.complete(1);
    for (const auto& chunk : step.chunks) {
      if (chunk.samples && ++outputs_[chunk.slot] >= requests_[chunk.slot].max_tokens) scheduler_.remove(chunk.slot);
    }
  }
  // vLLM's finish_requests: the request leaves wherever it is.
  void finish(const std::string& id) {
    if (scheduler_.holds(slot_of(id))) scheduler_.remove(slot_of(id));
  }

  std::vector<std::string> running() const { return ids(0, scheduler_.running()); }
  std::vector<std::string> waiting() const {
    const auto all = scheduler_.slots();
    return ids(scheduler_.running(), all.size());
  }
  std::string id(std::uint32_t slot) const { return requests_[slot].id; }
  const VllmScheduler& scheduler() const { return scheduler_; }

 private:
  static VllmLimits limits(const json& c) {
    const json& l = c.at("limits");
    VllmLimits out;
    out.max_num_seqs = l.at("max_num_seqs").get<std::uint32_t>();
    out.max_num_batched_tokens = l.at("max_num_batched_tokens").get<std::uint32_t>();
    out.long_prefill_token_threshold = l.value("long_prefill_token_threshold", 0u);
    out.block_size = l.at("block_size").get<std::uint32_t>();
    out.prefix_caching = l.at("prefix_caching").get<bool>();
    const std::string policy = l.value("policy", "fcfs");
    EXPECT_TRUE(kVllmPolicyNames.parse(policy)) << policy;
    out.policy = kVllmPolicyNames.parse(policy).value_or(VllmPolicy::kFcfs);
    return out;
  }
  // vLLM's block 0 is the null block, never handed out.
  static std::uint32_t blocks(const json& c) { return c.at("limits").at("blocks").get<std::uint32_t>() - 1; }
  std::uint32_t slot_of(const std::string& id) const {
    for (std::uint32_t slot = 0; slot < requests_.size(); ++slot) {
      if (requests_[slot].id == id) return slot;
    }
    ADD_FAILURE() << "no request '" << id << "' in the case";
    return 0;
  }
  std::vector<std::string> ids(std::size_t from, std::size_t to) const {
    const auto all = scheduler_.slots();
    std::vector<std::string> out;
    for (std::size_t i = from; i < to; ++i) out.push_back(id(all[i]));
    return out;
  }

  std::vector<Request> requests_;
  std::deque<TokenStream> streams_;
  std::vector<std::uint32_t> outputs_;
  VllmScheduler scheduler_;
};

void check_step(Player& player, const json& expected, const std::string& where) {
  const VllmScheduler::Step& step = player.schedule();
  if (expected.contains("scheduled")) {
    std::vector<std::pair<std::string, std::uint32_t>> got;
    for (const auto& chunk : step.chunks) got.emplace_back(player.id(chunk.slot), chunk.tokens);
    EXPECT_EQ(got, (expected.at("scheduled").get<std::vector<std::pair<std::string, std::uint32_t>>>())) << where;
  }
  if (expected.contains("preempted")) {
    std::vector<std::string> got;
    for (const std::uint32_t slot : step.preempted) got.push_back(player.id(slot));
    EXPECT_EQ(got, expected.at("preempted").get<std::vector<std::string>>()) << where;
  }
  if (expected.contains("running")) {
    EXPECT_EQ(player.running(), expected.at("running").get<std::vector<std::string>>()) << where;
  }
  if (expected.contains("waiting")) {
    EXPECT_EQ(player.waiting(), expected.at("waiting").get<std::vector<std::string>>()) << where;
  }
  if (expected.contains("free_blocks")) {
    EXPECT_EQ(player.scheduler().cache().free_blocks(), expected.at("free_blocks").get<std::uint32_t>()) << where;
  }
  if (expected.contains("hit_tokens")) {
    EXPECT_EQ(step.hit_tokens, expected.at("hit_tokens").get<std::uint64_t>()) << where;
  }
  EXPECT_EQ(player.scheduler().check_invariants(), std::vector<std::string>{}) << where;
}

TEST(VllmConformanceTest, EveryCaseReadFromVllmsTestsPlaysStepForStep) {
  const json cases = fixture().at("cases");
  ASSERT_FALSE(cases.empty());
  for (const json& c : cases) {
    const std::string name = c.at("id").get<std::string>() + " (" + c.at("test").get<std::string>() + " @" +
                             c.at("commit").get<std::string>().substr(0, 8) + ")";
    Player player(c);
    const json& steps = c.at("steps");
    const bool adds = std::any_of(steps.begin(), steps.end(), [](const json& s) { return s.contains("add"); });
    if (!adds) player.add_all();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      for (const json& id : steps[i].value("add", json::array())) player.add(id.get<std::string>());
      check_step(player, steps[i], name + ", step " + std::to_string(i + 1));
      player.complete();
      for (const json& id : steps[i].value("finish", json::array())) player.finish(id.get<std::string>());
    }
    if (!c.contains("end")) continue;
    for (int guard = 0; guard < 100'000 && !player.scheduler().empty(); ++guard) {
      player.schedule();
      player.complete();
    }
    EXPECT_TRUE(player.scheduler().empty()) << name << ": requests left";
    check_step(player, c.at("end"), name + ", at the end");
  }
}

// Each case of the spec's list is played above or explained: a case cannot drop out of
// both lists unnoticed.
TEST(VllmConformanceTest, EverySpecCaseIsPlayedOrItsDifferenceExplained) {
  const json file = fixture();
  std::set<std::string> covered;
  for (const json& c : file.at("cases")) covered.insert(c.at("id").get<std::string>());
  const json prefix_caching = fixture("prefix_caching.json");
  for (const json& c : prefix_caching.at("cases")) covered.insert(c.at("id").get<std::string>());
  for (const json& d : file.at("differs")) {
    EXPECT_FALSE(d.value("why", "").empty()) << d.dump();
    EXPECT_TRUE(covered.insert(d.at("id").get<std::string>()).second) << d.at("id") << " is both played and excused";
  }
  std::set<std::string> spec;
  for (int i = 1; i <= 16; ++i) spec.insert("S" + std::to_string(i));
  for (int i = 1; i <= 8; ++i) spec.insert("P" + std::to_string(i));
  for (int i = 1; i <= 4; ++i) spec.insert("C" + std::to_string(i));
  spec.insert({"K1", "K2"});
  EXPECT_EQ(covered, spec);
}

}  // namespace
}  // namespace meshsim::cluster
