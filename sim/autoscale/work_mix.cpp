#include "sim/autoscale/work_mix.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::autoscale {
namespace {

constexpr double kBinRatio = 1.25;

std::uint8_t bin_of(std::uint32_t tokens) {
  if (tokens <= 1) return 0;
  const auto bin = static_cast<std::size_t>(std::log(static_cast<double>(tokens)) / std::log(kBinRatio));
  return static_cast<std::uint8_t>(std::min<std::size_t>(bin, 79));
}

}  // namespace

void WorkMix::Lengths::add(engine::SimTime at, std::uint32_t tokens, std::uint8_t bin) {
  entries_.push_back({at, tokens, bin});
  ++bins_[bin];
  sum_ += tokens;
}

void WorkMix::Lengths::forget_before(engine::SimTime at) {
  while (!entries_.empty() && entries_.front().at < at) {
    --bins_[entries_.front().bin];
    sum_ -= entries_.front().tokens;
    entries_.pop_front();
  }
  if (entries_.empty()) sum_ = 0;  // no drift from the subtractions
}

double WorkMix::Lengths::mean() const {
  return entries_.empty() ? 0.0 : sum_ / static_cast<double>(entries_.size());
}

double WorkMix::Lengths::p90() const {
  if (entries_.empty()) return 0.0;
  // The bin where the 90th percentile falls, at its geometric middle.
  const double wanted = 0.9 * static_cast<double>(entries_.size());
  double seen = 0;
  for (std::size_t b = 0; b < kBins; ++b) {
    seen += static_cast<double>(bins_[b]);
    if (seen >= wanted) return std::pow(kBinRatio, static_cast<double>(b) + 0.5);
  }
  return std::pow(kBinRatio, static_cast<double>(kBins) - 0.5);
}

void WorkMix::Lengths::clear() {
  entries_.clear();
  bins_.fill(0);
  sum_ = 0;
}

void WorkMix::clear() {
  for (auto& lengths : prompts_) lengths.clear();
  for (auto& lengths : outputs_) lengths.clear();
  std::fill(per_second_.begin(), per_second_.end(), 0u);
  last_second_ = -1;
  count_sum_.fill(0);
  count_squares_.fill(0);
}

std::uint32_t& WorkMix::count_of(std::int64_t second) {
  return per_second_[static_cast<std::size_t>(second % static_cast<std::int64_t>(per_second_.size()))];
}

void WorkMix::advance_to(std::int64_t second) {
  if (second <= last_second_) return;
  if (last_second_ < 0 || second - last_second_ >= static_cast<std::int64_t>(per_second_.size())) {
    // Every second counted has left the longest window: start over.
    std::fill(per_second_.begin(), per_second_.end(), 0u);
    count_sum_.fill(0);
    count_squares_.fill(0);
    last_second_ = second;
    return;
  }
  // Seconds end in order: the one under way, then the empty ones up to `second`. An ended
  // second enters each window and the one a window long before it leaves (still in the
  // ring, which holds the longest window and one more); then the next starts empty.
  for (std::int64_t ended = last_second_; ended < second; ++ended) {
    const std::uint64_t entering = count_of(ended);
    for (std::size_t w = 0; w < kWindowsS.size(); ++w) {
      const std::int64_t leaving_second = ended - static_cast<std::int64_t>(kWindowsS[w]);
      const std::uint64_t leaving = leaving_second >= 0 ? count_of(leaving_second) : 0;
      count_sum_[w] += entering - leaving;
      count_squares_[w] += entering * entering - leaving * leaving;
    }
    count_of(ended + 1) = 0;
  }
  last_second_ = second;
}

void WorkMix::on_arrival(engine::SimTime at, std::uint32_t prompt_tokens) {
  const std::int64_t second = at.us() / 1'000'000;
  advance_to(second);
  // An arrival in a second already ended (out of order) counts in the windows holding it;
  // one older than the ring is outside them all.
  const std::int64_t age = last_second_ - second;
  if (age < static_cast<std::int64_t>(per_second_.size())) {
    std::uint32_t& count = count_of(second);
    for (std::size_t w = 0; w < kWindowsS.size(); ++w) {
      if (age > 0 && age <= static_cast<std::int64_t>(kWindowsS[w])) {
        count_sum_[w] += 1;
        count_squares_[w] += 2 * static_cast<std::uint64_t>(count) + 1;
      }
    }
    ++count;
  }
  const std::uint8_t bin = bin_of(prompt_tokens);
  for (auto& lengths : prompts_) lengths.add(at, prompt_tokens, bin);
}

void WorkMix::on_completion(engine::SimTime at, std::uint32_t output_tokens) {
  const std::uint8_t bin = bin_of(output_tokens);
  for (auto& lengths : outputs_) lengths.add(at, output_tokens, bin);
}

std::array<WorkMix::Figures, 2> WorkMix::figures(engine::SimTime now) {
  std::array<Figures, 2> out;
  // Whole seconds only: the one `now` falls in has only begun.
  const std::int64_t now_second = now.us() / 1'000'000;
  advance_to(now_second);
  for (std::size_t w = 0; w < kWindowsS.size(); ++w) {
    const engine::SimTime since = now - engine::SimTime::from_seconds(kWindowsS[w]);
    prompts_[w].forget_before(since);
    outputs_[w].forget_before(since);
    Figures& f = out[w];
    f.prompt_mean = prompts_[w].mean();
    f.prompt_p90 = prompts_[w].p90();
    f.output_mean = outputs_[w].mean();
    f.output_p90 = outputs_[w].p90();
    const std::int64_t seconds = std::min(static_cast<std::int64_t>(kWindowsS[w]), now_second);
    const auto sum = static_cast<double>(count_sum_[w]), squares = static_cast<double>(count_squares_[w]);
    if (seconds > 0 && sum > 0) {
      const double mean = sum / static_cast<double>(seconds);
      f.burstiness = std::max(0.0, squares / static_cast<double>(seconds) - mean * mean) / mean;
    }
  }
  return out;
}

}  // namespace meshsim::autoscale
