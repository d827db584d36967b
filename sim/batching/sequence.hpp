#pragma once

// A request as an instance's engine sees it: the tokens it has and needs, and the KV and
// recomputation state batch formation reads and writes. LlmCluster keeps one per request
// slot (Sequences) and hands the table to every engine; what the cluster alone knows (the
// request's record, timings, routing) stays in the cluster.

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/batching/token_stream.hpp"

namespace meshsim::cluster {

struct Sequence {
  std::uint64_t id = 0;  // the request's: later ids are evicted first
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;
  std::uint32_t generated = 0;    // output tokens so far (the first comes from prefill)
  std::uint64_t kv_reserved = 0;  // KV tokens held on its instance (SplitwiseSim's rules)
  bool recomputing = false;       // evicted: its prefill reruns over prompt + generated
  bool reserve_all = false;       // evicted under kReserve: the rerun reserves prompt + output
  // Left out of a batch with its KV kept, and evicted (its KV freed, to recompute):
  // RequestRecord::pauses and kv_evictions.
  std::uint32_t pauses = 0;
  std::uint32_t kv_evictions = 0;
  // Its class's priority, lower first (vLLM's convention; the vLLM engine's priority policy).
  std::int32_t priority = 0;

  // Tokens its next prefill computes: the prompt, and when recomputing the output so far.
  std::uint32_t prefill_tokens() const { return prompt_tokens + (recomputing ? generated : 0); }
};

// The sequences by request slot, and their tokens (for engines that cache prefixes:
// reads_tokens). Batch formation walks the sequences slot after slot: they are small
// values in one array; the streams, which engines point to, live apart in a deque.
class Sequences {
 public:
  Sequence& operator[](std::uint32_t slot) { return seqs_[slot]; }
  const Sequence& operator[](std::uint32_t slot) const { return seqs_[slot]; }
  TokenStream& stream(std::uint32_t slot) { return streams_[slot]; }
  const TokenStream& stream(std::uint32_t slot) const { return streams_[slot]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(seqs_.size()); }
  // A new slot, empty.
  std::uint32_t add() {
    seqs_.emplace_back();
    streams_.emplace_back();
    return size() - 1;
  }

 private:
  std::vector<Sequence> seqs_;
  std::deque<TokenStream> streams_;
};

}  // namespace meshsim::cluster
