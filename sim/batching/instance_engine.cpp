// The engines by BatchScheduler: the one place that knows which engine runs which rules
// (a new engine is a file in this folder and a case here).

#include "sim/batching/instance_engine.hpp"

#include "sim/batching/splitwise_engine.hpp"
#include "sim/batching/vllm_engine.hpp"

namespace meshsim::cluster {

std::unique_ptr<InstanceEngine> make_engine(const EngineOptions& options, std::uint64_t kv_capacity_tokens,
                                            Sequences& sequences) {
  switch (options.scheduler) {
    case BatchScheduler::kVllm: return std::make_unique<VllmEngine>(options.vllm, kv_capacity_tokens, sequences);
    case BatchScheduler::kSplitwise: break;
  }
  return std::make_unique<SplitwiseEngine>(options.batching, options.kv_allocation, kv_capacity_tokens, sequences);
}

std::uint64_t usable_kv_tokens(const EngineOptions& options, std::uint64_t tokens) {
  if (options.scheduler != BatchScheduler::kVllm) return tokens;
  return tokens - tokens % options.vllm.block_size;  // whole blocks only
}

bool reads_tokens(const EngineOptions& options) { return options.scheduler == BatchScheduler::kVllm; }

bool caches_prefixes(const EngineOptions& options) {
  return options.scheduler == BatchScheduler::kVllm && options.vllm.prefix_caching;
}

bool supports_aborts(const EngineOptions& options) { return options.scheduler == BatchScheduler::kVllm; }

}  // namespace meshsim::cluster
