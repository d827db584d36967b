#pragma once

#include <cstdint>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::cluster {

// A request's tokens as prefix caching tells them apart: its prompt's named runs
// (TraceRequest::prefix), then the rest of its prompt (its own), then its output (named by
// TraceRequest::output_content, else its own). Full blocks of `block_size` tokens are
// named by chained hashes, vLLM's scheme: a block's hash covers its tokens and, through
// its parent's hash, every token before it, so equal hashes mean equal prefixes.
//
// Hashes are computed once each, on demand, in order: O(1) per block plus O(1) per named
// run passed.
class TokenStream {
 public:
  TokenStream() = default;
  TokenStream(std::uint64_t request_id, std::uint32_t prompt_tokens, std::vector<traces::ContentSegment> prefix,
              std::uint64_t output_content, std::uint32_t block_size);

  // The hash of full block `index` (tokens [index * block_size, (index + 1) * block_size)).
  std::uint64_t block_hash(std::uint32_t index);
  // The first block holding one of the request's own tokens: its hash, and through the
  // chain every later block's, no other request can produce (kNoPrivateBlock: none).
  std::uint32_t first_private_block() const { return first_private_block_; }
  static constexpr std::uint32_t kNoPrivateBlock = ~0u;

 private:
  // Mixes the tokens [from, from + count) of the stream into `hash`, run by run.
  std::uint64_t mix_tokens(std::uint64_t hash, std::uint64_t from, std::uint32_t count);

  std::uint64_t request_id_ = 0;
  std::uint32_t prompt_tokens_ = 0;
  std::vector<traces::ContentSegment> prefix_;
  std::uint64_t output_content_ = 0;
  std::uint32_t block_size_ = 16;
  std::uint32_t first_private_block_ = 0;
  std::vector<std::uint64_t> hashes_;
  // Where the next block starts in prefix_: the run holding it and that run's first token.
  std::size_t run_ = 0;
  std::uint64_t run_start_ = 0;
};

}  // namespace meshsim::cluster
