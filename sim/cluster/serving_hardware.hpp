#pragma once

// The kinds of server a serving cluster's pools run on, and what an instance on each is:
// its SKU and tensor-parallel degree, the performance model that prices its iterations,
// its KV capacity, and the peak rates that measure its useful work.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cluster/llm_cluster_config.hpp"
#include "sim/engine/sim_time.hpp"
#include "sim/perf/hardware.hpp"
#include "sim/perf/perf_model.hpp"

namespace meshsim::cluster {

struct InstanceHardware {
  SkuSpec sku;
  std::uint32_t tensor_parallel = 8;
  std::shared_ptr<const PerfModel> perf;
  std::uint64_t kv_capacity_tokens = 0;
  EngineOptions engine;  // the cluster's, resolved for this hardware (a host tier's room and link)
  std::uint32_t per_server = 1;  // instances a server holds
  // Nanoseconds per unit of work at the instance's peak (see useful_ns).
  double per_token_ns = 0, per_attention_pair_ns = 0, weights_ns = 0, per_kv_token_ns = 0;

  // One iteration's length: whole microseconds, at least one (every iteration moves the
  // clock). A price outside [0, kMaxIterationMs] is a RangeError naming the work. Inline:
  // it prices every iteration of a folded run.
  engine::SimTime iteration_time(const PrefillWork& prefill, const DecodeWork& decode) const {
    const double ms = perf->iteration_ms(prefill, decode);
    if (!(ms >= 0 && ms <= kMaxIterationMs)) refuse_price(prefill, decode, ms);
    // std::llround's value (halves away from zero), without a call into libm: a
    // non-negative double's fraction is exact.
    const double us = ms * 1000.0;
    auto whole = static_cast<std::int64_t>(us);
    if (us - static_cast<double>(whole) >= 0.5) ++whole;
    return engine::SimTime::from_us(std::max<std::int64_t>(1, whole));
  }
  // An iteration's useful work: the time its FLOPs and bytes would take at the GPUs' peak
  // compute or memory bandwidth, whichever binds (at most `length`), in whole
  // nanoseconds, so that sums do not depend on how iterations were grouped into events.
  std::int64_t useful_ns(const PrefillWork& prefill, const DecodeWork& decode, engine::SimTime length) const {
    const double compute_ns =
        per_token_ns * static_cast<double>(prefill.tokens + decode.batch) +
        per_attention_pair_ns * (prefill.squared_tokens + static_cast<double>(decode.context_tokens));
    const double memory_ns = weights_ns + per_kv_token_ns * static_cast<double>(decode.context_tokens + prefill.tokens);
    const double ideal_ns = std::min(std::max(compute_ns, memory_ns), static_cast<double>(length.us()) * 1e3);
    return static_cast<std::int64_t>(ideal_ns + 0.5);
  }

 private:
  [[noreturn]] static void refuse_price(const PrefillWork& prefill, const DecodeWork& decode, double ms);
};

// The distinct hardware of a cluster's pools (the config's SKU and TP degree first, then
// each pool_hardware entry not equal to one before), and which of it each pool runs on.
// Fixed once built.
class ServingHardware {
 public:
  // Checks what only the built figures show (a TP degree that divides the GPUs per node,
  // room for at least one KV token) and throws std::logic_error naming the SKU.
  explicit ServingHardware(const LlmClusterConfig& config);

  std::size_t kinds() const { return kinds_.size(); }
  const InstanceHardware& kind(std::uint32_t index) const { return kinds_[index]; }
  // The index of `tag`'s pool's hardware.
  std::uint32_t index_of(InstanceTag tag) const { return of_pool_[static_cast<std::size_t>(tag)]; }
  const InstanceHardware& of(InstanceTag tag) const { return kinds_[index_of(tag)]; }
  // Whether two pools run on the same hardware (an instance can move between them).
  bool same(InstanceTag a, InstanceTag b) const { return index_of(a) == index_of(b); }

 private:
  std::uint32_t add(const LlmClusterConfig& config, const SkuSpec& sku, std::uint32_t tensor_parallel,
                    std::shared_ptr<const PerfModel> perf);

  std::vector<InstanceHardware> kinds_;
  std::array<std::uint32_t, 3> of_pool_{};  // by InstanceTag
};

}  // namespace meshsim::cluster
