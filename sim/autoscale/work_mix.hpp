#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/autoscale/capacity_model.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::autoscale {

// The work behind the request rate, over the last minute and the last five: the prompt
// lengths of the requests arriving, the output lengths of those completing (known only
// then), and how bursty the arrivals are. A request rate means more or less work as the
// length mix moves (ServeGen's m-large: the daily mean prompt from 590 to 1,407 tokens);
// these are the observation's work features (rl/env/observation.hpp). Sliding windows,
// so nothing in them marks where a trace's own windows begin.
class WorkMix {
 public:
  static constexpr std::array<double, 2> kWindowsS = {60.0, 300.0};

  // The prompts of the arrivals, the outputs of the completions (0 when none).
  using Figures = WorkFigures;

  void clear();
  void on_arrival(engine::SimTime at, std::uint32_t prompt_tokens);
  void on_completion(engine::SimTime at, std::uint32_t output_tokens);
  // The figures over each of kWindowsS up to `now` (not before the last event).
  std::array<Figures, 2> figures(engine::SimTime now);

 private:
  // Lengths seen in a sliding window: their sum for the mean and a histogram of log-spaced
  // bins (25% wide) for the 90th percentile, so a decision costs the same whatever the rate.
  class Lengths {
   public:
    static constexpr std::size_t kBins = 80;
    // `bin` is bin_of(tokens), worked out once for both windows.
    void add(engine::SimTime at, std::uint32_t tokens, std::uint8_t bin);
    void forget_before(engine::SimTime at);
    double mean() const;
    double p90() const;
    void clear();

   private:
    struct Entry {
      engine::SimTime at;
      std::uint32_t tokens;
      std::uint8_t bin;
    };
    std::deque<Entry> entries_;
    std::array<std::uint64_t, kBins> bins_{};
    double sum_ = 0;
  };

  std::array<Lengths, 2> prompts_, outputs_;
  // Arrivals per second over the longest window and the second under way, a ring indexed
  // by the second; and per window, the sum of the whole seconds' counts and of their
  // squares, kept as seconds end and leave it, so a decision costs the same whatever the
  // window (integers: the figures are what summing the ring each time would give).
  std::vector<std::uint32_t> per_second_ = std::vector<std::uint32_t>(static_cast<std::size_t>(kWindowsS[1]) + 1, 0);
  std::int64_t last_second_ = -1;  // the newest second counted (-1: none yet), still under way
  std::array<std::uint64_t, 2> count_sum_{}, count_squares_{};
  std::uint32_t& count_of(std::int64_t second);  // its slot in the ring
  void advance_to(std::int64_t second);
};

}  // namespace meshsim::autoscale
