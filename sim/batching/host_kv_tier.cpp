#include "sim/batching/host_kv_tier.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"
#include "sim/engine/hash_combine.hpp"

namespace meshsim::cluster {

using engine::hash_combine;
using engine::SimTime;

HostKvTier::HostKvTier(const HostKvOptions& options)
    : options_(options),
      store_(static_cast<std::uint32_t>(std::min<std::uint64_t>(options.capacity_tokens / options.block_tokens, ~0u)),
             options.eviction) {
  MESHSIM_CHECK(options.block_tokens > 0 && options.capacity_tokens >= options.block_tokens,
                "a host KV tier needs room for at least one block (capacity resolved for its instance)");
}

// Block j's key folds the key of block j - 1 with the pieces of the runs its tokens fall in
// (their source, id, first token's identity and length): equal keys, equal tokens from
// the request's first.
void HostKvTier::block_keys(const TokenStream& stream, std::uint32_t block_tokens, std::uint32_t full_blocks,
                            std::vector<std::uint64_t>& keys) {
  const std::uint64_t end = std::uint64_t{full_blocks} * block_tokens;
  std::uint64_t at = std::uint64_t{keys.size()} * block_tokens;
  if (at >= end) return;
  std::uint64_t key = keys.empty() ? 0x6d657368ULL : keys.back();
  stream.for_each_run([&](const TokenStream::Run& run) {
    const std::uint64_t run_end = std::min(run.end, end);
    while (at < run_end) {
      const std::uint64_t block_end = (at / block_tokens + 1) * block_tokens;
      const std::uint64_t piece_end = std::min(run_end, block_end);
      key = hash_combine(key, static_cast<std::uint64_t>(run.source));
      key = hash_combine(key, run.id);
      key = hash_combine(key, run.offset + (at - run.begin));
      key = hash_combine(key, piece_end - at);
      at = piece_end;
      if (at == block_end) keys.push_back(key);
    }
    return at < end;
  });
}

HostKvTier::Hit HostKvTier::lookup(std::span<const std::uint64_t> keys, std::uint32_t gpu_hit_tokens,
                                   std::size_t loads_in_flight, std::uint32_t max_loads, bool check_loading) {
  Hit hit;
  if (loads_in_flight >= max_loads) {
    hit.deferred = true;
    return hit;
  }
  store_.touch(keys);
  const std::uint32_t b = options_.block_tokens;
  const std::uint64_t full_tokens = std::uint64_t{keys.size()} * b;
  if (full_tokens < std::uint64_t{gpu_hit_tokens} + b) return hit;  // less than a block to load
  hit.first = gpu_hit_tokens / b;
  hit.blocks = store_.lookup(keys.subspan(hit.first));
  if (hit.blocks == 0) return hit;
  const std::uint32_t end = (hit.first + hit.blocks) * b;
  if (end < gpu_hit_tokens + b) return Hit{};  // less than a whole block beyond the GPU hit
  hit.tokens = end - gpu_hit_tokens;
  if (check_loading) {
    for (const std::uint64_t key : keys.subspan(hit.first, hit.blocks)) {
      if (store_.loading(key)) return Hit{0, 0, 0, true};
    }
  }
  return hit;
}

double HostKvTier::bytes_of(std::size_t blocks) const {
  return static_cast<double>(blocks) * options_.block_tokens * options_.bytes_per_token;
}

SimTime HostKvTier::copy_time(std::size_t blocks) const {
  return options_.link_bytes_per_s > 0 ? SimTime::from_seconds_up(bytes_of(blocks) / options_.link_bytes_per_s)
                                       : SimTime::zero();
}

SimTime HostKvTier::start_load(std::span<const std::uint64_t> keys, std::uint32_t tokens, SimTime now) {
  store_.prepare_load(keys);
  const SimTime copy = copy_time(keys.size());
  link_free_ = std::max(link_free_, now) + options_.load_latency + copy;
  ++counts_.loads;
  counts_.hit_tokens += tokens;
  counts_.loaded_bytes += static_cast<std::uint64_t>(std::llround(bytes_of(keys.size())));
  counts_.load_time += options_.load_latency + copy;
  return link_free_;
}

void HostKvTier::finish_load(std::span<const std::uint64_t> keys) {
  store_.complete_load(keys);
}

bool HostKvTier::store(std::span<const std::uint64_t> keys, std::uint32_t from) {
  if (from >= keys.size()) return true;
  const auto stored = store_.store_now(keys.subspan(from));
  if (!stored) return false;
  counts_.stored_bytes += static_cast<std::uint64_t>(std::llround(bytes_of(*stored)));
  counts_.store_time += copy_time(*stored);
  return true;
}

HostKvCounts HostKvTier::take_counts() {
  HostKvCounts out = counts_;
  counts_ = HostKvCounts{};
  return out;
}

}  // namespace meshsim::cluster
