// vLLM's prefix-caching tests (tests/sim/vllm_conformance/prefix_caching.json) played op
// by op on the KV cache: on the block-by-block twin, block ids, reference counts and the
// free queue as vLLM's tests see them; on KvSpanCache, the engine's cache, everything it
// shows (blocks found and free among them, free blocks, evictions, table sizes). The twin
// and KvSpanCache agree on random workloads (kv_cache_test.cpp): the chain ends at vLLM.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "sim/batching/kv_span_cache.hpp"
#include "tests/sim/kv_block_cache.hpp"
#include "tests/sim/vllm_conformance/fixture.hpp"

namespace meshsim::cluster {
namespace {

using nlohmann::json;

json fixture() { return testing::conformance_fixture("prefix_caching.json"); }

// vLLM's block ids are the twin's plus one: its block 0 is the null block.
std::vector<std::uint32_t> vllm_ids(const std::vector<std::uint32_t>& ours) {
  std::vector<std::uint32_t> ids;
  for (const std::uint32_t block : ours) ids.push_back(block + 1);
  return ids;
}

class Player {
 public:
  Player(const json& c, bool twin) : block_size_(c.at("block_size").get<std::uint32_t>()) {
    const auto blocks = c.at("blocks").get<std::uint32_t>() - 1;
    if (twin) {
      twin_ = new KvBlockCache(blocks, block_size_, true);
      cache_.reset(twin_);
    } else {
      cache_ = std::make_unique<KvSpanCache>(blocks, block_size_, true);
    }
  }

  void play(const json& op, const std::string& where) {
    if (op.contains("open")) {
      std::vector<traces::ContentSegment> named;
      for (const json& segment : op.at("named")) {
        const auto name = segment.at(0).get<std::string>();
        const auto id = names_.emplace(name, names_.size() + 1).first->second;
        named.push_back({id, segment.at(1).get<std::uint32_t>()});
      }
      const auto prompt = op.at("prompt").get<std::uint32_t>();
      streams_.emplace_back(streams_.size() + 1, prompt, std::move(named), 0);
      const std::uint32_t table = cache_->open(streams_.back());
      tables_[op.at("open").get<std::string>()] = {table, prompt};
    } else if (op.contains("find")) {
      const Request& r = request(op.at("find"));
      found_ = cache_->find_prefix(r.table, (r.prompt - 1) / block_size_);
      EXPECT_EQ(found_.blocks, op.at("expect").at("blocks").get<std::uint32_t>()) << where;
      EXPECT_EQ(found_.free, op.at("expect").at("free").get<std::uint32_t>()) << where;
    } else if (op.contains("take")) {
      cache_->take_prefix(request(op.at("take")).table);
    } else if (op.contains("grow")) {
      cache_->grow(request(op.at("grow")).table, op.at("blocks").get<std::uint32_t>());
    } else if (op.contains("extend")) {
      // The scheduler's allocate_slots: blocks for every token, the full ones registered.
      const std::uint32_t table = request(op.at("extend")).table;
      const auto tokens = op.at("tokens").get<std::uint32_t>();
      const std::uint32_t grow = (tokens + block_size_ - 1) / block_size_ - cache_->table_blocks(table);
      EXPECT_EQ(grow, op.at("expect").at("new_blocks").get<std::uint32_t>()) << where;
      cache_->grow(table, grow);
      cache_->register_full(table, tokens / block_size_);
      if (twin_ != nullptr) {
        EXPECT_EQ(twin_->registered_blocks(table), op.at("expect").at("registered").get<std::uint32_t>()) << where;
      }
    } else if (op.contains("register")) {
      cache_->register_full(request(op.at("register")).table, op.at("full").get<std::uint32_t>());
    } else if (op.contains("release")) {
      cache_->release(request(op.at("release")).table);
    } else if (op.contains("fits")) {
      // vLLM's allocate_slots refuses when the hit's free blocks and the new ones exceed the
      // free blocks; the refusal must change nothing (the checks below).
      const auto wanted = found_.free + op.at("new_blocks").get<std::uint32_t>();
      EXPECT_EQ(wanted <= cache_->free_blocks(), op.at("expect").get<bool>()) << where;
    } else {
      ADD_FAILURE() << where << ": unknown op " << op.dump();
    }
    check(op, where);
  }

 private:
  struct Request {
    std::uint32_t table = 0;
    std::uint32_t prompt = 0;
  };
  const Request& request(const json& name) { return tables_.at(name.get<std::string>()); }

  void check(const json& op, const std::string& where) {
    if (op.contains("free_blocks")) {
      EXPECT_EQ(cache_->free_blocks(), op.at("free_blocks").get<std::uint32_t>()) << where;
    }
    if (op.contains("evictions")) {
      EXPECT_EQ(cache_->evictions(), op.at("evictions").get<std::uint64_t>()) << where;
    }
    const std::string* name = nullptr;
    for (const char* key : {"take", "grow", "extend"}) {
      if (op.contains(key)) name = op.at(key).get_ptr<const std::string*>();
    }
    if (op.contains("ids") && name != nullptr) {
      const std::uint32_t table = tables_.at(*name).table;
      EXPECT_EQ(cache_->table_blocks(table), op.at("ids").size()) << where;
      if (twin_ != nullptr) {
        EXPECT_EQ(vllm_ids(twin_->block_ids(table)), op.at("ids").get<std::vector<std::uint32_t>>()) << where;
      }
    }
    if (twin_ == nullptr) {
      EXPECT_EQ(cache_->check_invariants(), std::vector<std::string>{}) << where;
      return;
    }
    if (op.contains("free_queue")) {
      EXPECT_EQ(vllm_ids(twin_->pool().free_queue()), op.at("free_queue").get<std::vector<std::uint32_t>>()) << where;
    }
    const json held = op.value("held", json::object());
    for (const auto& [id, refs] : held.items()) {
      EXPECT_EQ(twin_->pool().refs(static_cast<std::uint32_t>(std::stoul(id) - 1)), refs.get<std::uint32_t>())
          << where << ", block " << id;
    }
    EXPECT_EQ(twin_->check_invariants(), std::vector<std::string>{}) << where;
  }

  std::uint32_t block_size_;
  std::unique_ptr<KvCache> cache_;
  KvBlockCache* twin_ = nullptr;
  std::deque<TokenStream> streams_;  // a table keeps its stream's address
  std::map<std::string, std::uint64_t> names_;
  std::map<std::string, Request> tables_;
  KvCache::Prefix found_;
};

TEST(VllmPrefixCachingConformanceTest, EveryCasePlaysOpByOpOnTheBlockTwinAndTheEngineCache) {
  const json cases = fixture().at("cases");
  ASSERT_EQ(cases.size(), 5u);
  for (const json& c : cases) {
    for (const bool twin : {true, false}) {
      const std::string name = c.at("id").get<std::string>() + " (" + c.at("test").get<std::string>() + " @" +
                               c.at("commit").get<std::string>().substr(0, 8) + ") on " +
                               (twin ? "the block twin" : "KvSpanCache");
      Player player(c, twin);
      const json& ops = c.at("ops");
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string where = name + ", op " + std::to_string(i + 1);
        try {
          player.play(ops[i], where);
        } catch (const json::exception& e) {
          FAIL() << where << ": " << e.what();
        }
      }
    }
  }
}

}  // namespace
}  // namespace meshsim::cluster
