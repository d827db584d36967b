#include "sim/cluster/token_stream.hpp"

#include <algorithm>

namespace meshsim::cluster {
namespace {

// splitmix64's finaliser: a bijection that spreads every input bit over the output.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Whose tokens a run is: a named segment, or the request's own prompt or output.
// A named output is a named run: the next turn's prompt names it the same way.
enum Source : std::uint64_t { kNamed = 1, kOwnPrompt = 2, kOwnOutput = 3 };

}  // namespace

TokenStream::TokenStream(std::uint64_t request_id, std::uint32_t prompt_tokens,
                         std::vector<traces::ContentSegment> prefix, std::uint64_t output_content,
                         std::uint32_t block_size)
    : request_id_(request_id),
      prompt_tokens_(prompt_tokens),
      prefix_(std::move(prefix)),
      output_content_(output_content),
      block_size_(block_size) {
  std::uint64_t named = 0;
  for (const auto& run : prefix_) named += run.tokens;
  if (named < prompt_tokens_) {
    first_private_block_ = static_cast<std::uint32_t>(named / block_size_);
  } else {
    first_private_block_ = output_content_ != 0 ? kNoPrivateBlock : prompt_tokens_ / block_size_;
  }
}

std::uint64_t TokenStream::mix_tokens(std::uint64_t hash, std::uint64_t from, std::uint32_t count) {
  const std::uint64_t end = from + count;
  std::uint64_t at = from;
  while (at < end) {
    // Skip the named runs that end before `at` (blocks are asked for in order).
    while (run_ < prefix_.size() && run_start_ + prefix_[run_].tokens <= at) {
      run_start_ += prefix_[run_].tokens;
      ++run_;
    }
    std::uint64_t source, id, offset, run_end;
    if (run_ < prefix_.size() && at < prompt_tokens_) {
      source = kNamed;
      id = prefix_[run_].id;
      offset = at - run_start_;
      run_end = std::min<std::uint64_t>(run_start_ + prefix_[run_].tokens, prompt_tokens_);
    } else if (at < prompt_tokens_) {
      source = kOwnPrompt;
      id = request_id_;
      offset = at;
      run_end = prompt_tokens_;
    } else {
      source = output_content_ != 0 ? kNamed : kOwnOutput;
      id = output_content_ != 0 ? output_content_ : request_id_;
      offset = at - prompt_tokens_;
      run_end = end;
    }
    const std::uint64_t stop = std::min(run_end, end);
    hash = mix(mix(mix(mix(hash, source), id), offset), stop - at);
    at = stop;
  }
  return hash;
}

std::uint64_t TokenStream::block_hash(std::uint32_t index) {
  while (hashes_.size() <= index) {
    const std::uint64_t parent = hashes_.empty() ? 0x6b76626c6f636b73ULL : hashes_.back();
    const std::uint64_t from = std::uint64_t{block_size_} * hashes_.size();
    hashes_.push_back(mix_tokens(parent, from, block_size_));
  }
  return hashes_[index];
}

}  // namespace meshsim::cluster
