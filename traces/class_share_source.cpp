#include "traces/class_share_source.hpp"

#include <utility>

#include "sim/engine/hash_combine.hpp"

namespace meshsim::traces {

ClassShareSource::ClassShareSource(std::unique_ptr<RequestSource> inner, std::vector<double> shares,
                                   std::uint64_t seed)
    : inner_(std::move(inner)), shares_(std::move(shares)), seed_(seed) {}

std::uint8_t ClassShareSource::draw(const std::vector<double>& shares, std::uint64_t seed, std::uint64_t id) {
  // 53 bits of the hash as a uniform draw in [0, 1).
  const double u = static_cast<double>(engine::hash_combine(engine::hash_combine(seed, 0x636c617373ULL), id) >> 11) *
                   0x1.0p-53;
  double below = 0.0;
  for (std::size_t c = 0; c + 1 < shares.size(); ++c) {
    below += shares[c];
    if (u < below) return static_cast<std::uint8_t>(c);
  }
  return static_cast<std::uint8_t>(shares.size() - 1);  // the last takes what rounding leaves
}

Expected<std::optional<TraceRequest>> ClassShareSource::next() {
  auto request = inner_->next();
  if (request && *request) (*request)->service_class = draw(shares_, seed_, (*request)->id);
  return request;
}

}  // namespace meshsim::traces
