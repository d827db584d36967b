#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/batching/batching_options.hpp"
#include "sim/batching/host_kv_store.hpp"
#include "sim/batching/token_stream.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

// An instance's host-memory KV tier as vLLM's OffloadingConnector runs it over its CPU
// offloading manager (HostKvStore), seen from the scheduler:
// - blocks of options.block_tokens tokens (a multiple of the GPU block), each named by a
//   key chained over its tokens and every token before them (block_keys), as vLLM's block
//   hashes are;
// - after a request's GPU prefix hit, the lookup (vLLM's get_num_new_matched_tokens) finds
//   its next whole blocks stored here; it is put off while as many loads as max_num_seqs
//   run, or while a block it would load is being loaded for another request;
// - a load copies whole blocks over the host link, one copy at a time (latency plus bytes
//   over the link), and the request waits for it;
// - every full block a step computes is stored, and readable from the end of that step.
//   (vLLM copies it after the step's forward pass; at tens of GB/s a step's new blocks copy
//   in less time than a step, so a store is not made to wait. Its link time is counted.)
// - a request's blocks are touched when it is looked up and when it leaves (touch), its
//   new blocks when they are stored. vLLM touches all of them at every store: the same
//   order once the request has left, without a cost in its blocks at every step.
//
// Costs: block_keys O(runs + new blocks); lookup and touch O(the request's blocks); store
// O(new blocks).
class HostKvTier {
 public:
  explicit HostKvTier(const HostKvOptions& options);

  std::uint32_t block_tokens() const { return options_.block_tokens; }

  // Extends `keys` (a request's, from its first block) to the first `full_blocks` blocks of
  // `stream`.
  static void block_keys(const TokenStream& stream, std::uint32_t block_tokens, std::uint32_t full_blocks,
                         std::vector<std::uint64_t>& keys);

  struct Hit {
    std::uint32_t first = 0;   // the first block to load
    std::uint32_t blocks = 0;  // how many (0: no hit)
    std::uint32_t tokens = 0;  // tokens they add to the GPU hit
    bool deferred = false;     // ask again at a later step
  };
  // `keys`: every full block of the request's known tokens; `gpu_hit_tokens`: its GPU
  // prefix hit; `check_loading`: whether blocks being loaded put the lookup off (vLLM does
  // so with GPU prefix caching).
  Hit lookup(std::span<const std::uint64_t> keys, std::uint32_t gpu_hit_tokens, std::size_t loads_in_flight,
             std::uint32_t max_loads, bool check_loading);
  // Starts loading blocks (pinned until finish_load) that add `tokens` to a request's GPU
  // hit: returns when the copy ends.
  engine::SimTime start_load(std::span<const std::uint64_t> keys, std::uint32_t tokens, engine::SimTime now);
  void finish_load(std::span<const std::uint64_t> keys);
  // Stores the blocks [from, keys.size()) of a request whose first keys.size() blocks are
  // computed; false when no room could be made (every candidate pinned), changing nothing.
  bool store(std::span<const std::uint64_t> keys, std::uint32_t from);
  void count_deferred() { ++counts_.loads_deferred; }
  // A request's blocks were used: the first becomes the most recent.
  void touch(std::span<const std::uint64_t> keys) { store_.touch(keys); }

  // What the tier did since the last call.
  HostKvCounts take_counts();
  const HostKvStore& store() const { return store_; }

 private:
  double bytes_of(std::size_t blocks) const;
  engine::SimTime copy_time(std::size_t blocks) const;

  HostKvOptions options_;
  HostKvStore store_;
  engine::SimTime link_free_;  // when the host-to-GPU copies queued so far end
  HostKvCounts counts_;
};

}  // namespace meshsim::cluster
