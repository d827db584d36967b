#pragma once

// An offline LRU replay of a trace's block hashes (Mooncake's hash_ids, read as the
// requests' named prefix runs): the figure a host KV tier is checked against.
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::testing {

// Share of the requests' prompt tokens an LRU of `blocks` blocks hits, the requests in the
// order given: a request hits its leading blocks present (a last, partial block counts its
// tokens), then each of its blocks becomes the most recent, in order.
inline double offline_lru_hit_share(const std::vector<const traces::TraceRequest*>& requests, std::size_t blocks) {
  std::list<std::uint64_t> order;  // least recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
  std::uint64_t hit = 0, total = 0;
  for (const traces::TraceRequest* request : requests) {
    bool hitting = true;
    for (const auto& segment : request->prefix) {
      hitting = hitting && where.contains(segment.id);
      if (hitting) hit += segment.tokens;
    }
    total += request->prompt_tokens;
    for (const auto& segment : request->prefix) {
      if (auto it = where.find(segment.id); it != where.end()) order.erase(it->second);
      where[segment.id] = order.insert(order.end(), segment.id);
      if (order.size() > blocks) {
        where.erase(order.front());
        order.pop_front();
      }
    }
  }
  return static_cast<double>(hit) / static_cast<double>(total);
}

}  // namespace meshsim::testing
