#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::cluster {

// A request's tokens as prefix caching tells them apart, in runs: its prompt's named runs
// (TraceRequest::prefix, cut to the prompt), then the rest of its prompt (its own), then
// its output (named by TraceRequest::output_content, else its own). Token t of a run is
// (source, id, offset + t - begin): two requests share a token prefix exactly when their
// runs agree up to it, so a KV cache can match prefixes run by run instead of token by
// token (KvCache).
class TokenStream {
 public:
  // Whose tokens a run is: a named segment (a named output included: the next turn's
  // prompt names it the same way), or the request's own prompt or output.
  enum class Source : std::uint8_t { kNamed = 1, kOwnPrompt = 2, kOwnOutput = 3 };
  static constexpr std::uint64_t kOpen = ~std::uint64_t{0};
  struct Run {
    Source source = Source::kNamed;
    std::uint64_t id = 0;
    std::uint64_t offset = 0;  // the identity of its first token within (source, id)
    std::uint64_t begin = 0;   // its tokens are [begin, end) of the request's
    std::uint64_t end = kOpen;  // kOpen: the output, which grows
    // Tokens only this request has (and, since a prefix is matched whole, every token
    // after them).
    bool own() const { return source != Source::kNamed; }
  };

  TokenStream() = default;
  TokenStream(std::uint64_t request_id, std::uint32_t prompt_tokens, std::vector<traces::ContentSegment> prefix,
              std::uint64_t output_content)
      : request_id_(request_id),
        prompt_tokens_(prompt_tokens),
        prefix_(std::move(prefix)),
        output_content_(output_content) {}

  // Calls visit(const Run&) for each run of at least one token, in order, until it
  // returns false. O(runs).
  template <class Visit>
  void for_each_run(Visit&& visit) const {
    std::uint64_t at = 0;
    for (const auto& segment : prefix_) {
      if (at >= prompt_tokens_) break;
      const std::uint64_t end = std::min<std::uint64_t>(at + segment.tokens, prompt_tokens_);
      if (end > at && !visit(Run{Source::kNamed, segment.id, 0, at, end})) return;
      at = end;
    }
    if (at < prompt_tokens_ && !visit(Run{Source::kOwnPrompt, request_id_, at, at, prompt_tokens_})) return;
    if (output_content_ != 0) {
      visit(Run{Source::kNamed, output_content_, 0, prompt_tokens_, kOpen});
    } else {
      visit(Run{Source::kOwnOutput, request_id_, 0, prompt_tokens_, kOpen});
    }
  }

 private:
  std::uint64_t request_id_ = 0;
  std::uint32_t prompt_tokens_ = 0;
  std::vector<traces::ContentSegment> prefix_;
  std::uint64_t output_content_ = 0;
};

}  // namespace meshsim::cluster
