#include "traces/trace_request.hpp"

#include <algorithm>

namespace meshsim::traces {

std::vector<ContentSegment> segments_from_block_ids(const std::vector<std::uint64_t>& ids, std::uint32_t block_tokens,
                                                    std::uint32_t prompt_tokens) {
  std::vector<ContentSegment> segments;
  segments.reserve(ids.size());
  std::uint32_t covered = 0;
  for (const std::uint64_t id : ids) {
    if (covered >= prompt_tokens) break;
    const std::uint32_t tokens = std::min(block_tokens, prompt_tokens - covered);
    segments.push_back(ContentSegment{id, tokens});
    covered += tokens;
  }
  return segments;
}

}  // namespace meshsim::traces
