#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::traces {

// Draws each request of another source into a class of service by the classes' shares
// (fractions summing to 1, in the scenario's order). The draw hashes the seed and the
// request's id, so a request falls into the same class whatever window, rate scale or
// request limit shapes the workload, and whatever was drawn before it.
class ClassShareSource final : public RequestSource {
 public:
  ClassShareSource(std::unique_ptr<RequestSource> inner, std::vector<double> shares, std::uint64_t seed);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override { return inner_->progress(); }
  std::string describe() const override { return inner_->describe(); }
  std::optional<double> data_end_s() const override { return inner_->data_end_s(); }

  // The class `shares` give request `id` under `seed`.
  static std::uint8_t draw(const std::vector<double>& shares, std::uint64_t seed, std::uint64_t id);

 private:
  std::unique_ptr<RequestSource> inner_;
  std::vector<double> shares_;
  std::uint64_t seed_;
};

}  // namespace meshsim::traces
