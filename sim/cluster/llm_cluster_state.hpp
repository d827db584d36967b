#pragma once

#include <functional>
#include <queue>
#include <utility>

// LlmCluster's private state, shared by its two source files (llm_cluster.cpp: requests,
// routing and the Splitwise flow; llm_batching.cpp: batch formation and folded runs).

#include <vector>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/slot_queue.hpp"

namespace meshsim::cluster {

struct LlmCluster::Live {
  RequestRecord record;
  bool used = false;
  std::uint64_t submission = 0;   // which submission holds the slot (slots are reused)
  std::uint32_t instance = 0;     // where it is now
  std::uint32_t generated = 0;    // output tokens so far (the first comes from prefill)
  std::uint64_t kv_reserved = 0;  // KV tokens held on `instance`
  bool recomputing = false;       // evicted: its prefill reruns over prompt + generated
  bool reserve_all = false;       // evicted under kReserve: the rerun reserves prompt + output
  SimTime last_token;
  SimTime tbt_max;
  SimTime deadline = SimTime::max();  // arrival + the request timeout
  TokenStream stream;  // under the vLLM scheduler: its tokens, for prefix caching
};

// The iteration, or folded run of decode iterations of one batch, in progress.
struct Segment {
  SimTime start;
  SimTime end;
  std::uint32_t iterations = 0;
  std::uint64_t context = 0;    // KV tokens read by its first decode iteration
  SimTime first;                // length of its first iteration
  std::int64_t useful_ns = 0;   // useful work of its iterations (LlmCluster::useful_ns)
  // Its iterations' lengths and useful work, timed once when it begins (a cut, the KV
  // taken so far and the work done so far read them instead of pricing again).
  struct Step {
    SimTime length;
    std::int64_t useful_ns = 0;
  };
  std::vector<Step> steps;
  SimTime longest_later;        // longest of the others
  std::uint32_t fold_left = 0;  // iterations the same batch runs on after this segment
  bool cut = false;             // new work arrived: it ends at the next iteration boundary
  // Iterations this segment could time (LlmCluster::begin_segment): short after a cut,
  // doubling while segments run whole, so a fold cut after m iterations has timed O(m) of
  // them, whatever the fold's length.
  std::uint32_t cap = 0;
};

struct LlmCluster::Instance {
  InstanceTag tag = InstanceTag::kMixed;
  InstanceState state = InstanceState::kStarting;
  bool removed = false;
  bool counted_state = false;  // in the pool totals' counts by state
  bool evacuating = false;  // DRAINING past its timeout: its requests move at the next boundary
  std::uint32_t hardware = 0;  // LlmCluster::hardware_ index: its pool's
  std::uint32_t server = 0;
  std::unique_ptr<engine::Timer> timer;  // ranked by instance index (see start_iteration)
  // Waiting work, each queue first come first served.
  SlotQueue prompts;                    // to prefill; evicted sequences to recompute go first
  SlotQueue starved;                    // decoding, left out of max_preemptions batches: before prompts
  SlotQueue paused;                     // decoding, left out of fewer batches (KV kept)
  SlotQueue holders;                    // ready to decode, holding all the KV they need to start
  SlotQueue newcomers;                  // ready to decode once they reserve KV; the head blocks the rest
  std::unique_ptr<VllmScheduler> vllm;  // under the vLLM scheduler: its queues and KV blocks
  PrefixCacheCounts prefix;             // its steps' lookups, over every `vllm` it had
  // Under a request timeout: (deadline, slot) of the requests that joined `vllm` here,
  // earliest first; entries of requests gone elsewhere or finished are skipped when they
  // surface. (A request joins when it is queued, not when it is routed: one routed here
  // while its KV cache is in transit must not lose its entry.)
  std::priority_queue<std::pair<SimTime, std::uint32_t>, std::vector<std::pair<SimTime, std::uint32_t>>,
                      std::greater<>>
      deadlines;
  std::vector<std::uint32_t> prefill_batch;
  std::vector<std::uint32_t> decode_batch;
  // KV tokens held here. On demand, the tokens the running segment adds are counted at
  // its end (kv_in_segment gives them in between).
  std::uint64_t kv_used = 0;
  bool busy = false;
  Segment segment;
  // Routing loads.
  std::int64_t requests = 0;
  std::int64_t pending_tokens = 0;
  std::int64_t kv_promised = 0;  // KV tokens the routed requests will need here
  ActiveLoad counted;            // what of requests and pending_tokens active_loads_ holds

  bool has_waiting() const {
    return (vllm && !vllm->empty()) || !prompts.empty() || !starved.empty() || !paused.empty() || !holders.empty() || !newcomers.empty();
  }
  // Sequences in their decode phase here, running or not.
  std::uint64_t decoding() const {
    return decode_batch.size() + starved.size() + paused.size() + holders.size();
  }
};

}  // namespace meshsim::cluster
