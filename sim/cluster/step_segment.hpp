#pragma once

// The timing of one instance's running step: a step with prompts is one iteration; a
// decode-only step runs as a folded segment of iterations its engine forms unchanged,
// each priced once when the segment begins. Knows nothing of requests or events: the
// cluster arms its timer at end() and reads the figures when the segment closes.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/cluster/serving_hardware.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

class StepSegment {
 public:
  // A folded run of decode iterations is timed in segments of at most kFoldSegment
  // iterations, so cutting it short (new work arrived) costs O(this), not O(output); a
  // segment after a cut, a prefill or a batch change times at most kFirstSegment, and each
  // that runs whole doubles the next (arrivals cut most folds within a few iterations:
  // timing 256 each time cost a third of a default replay under vLLM).
  static constexpr std::uint32_t kFoldSegment = 256;
  static constexpr std::uint32_t kFirstSegment = 16;

  // A step with prompts in it, from `start`: one iteration, never folded.
  void begin_prefill(const InstanceHardware& hw, engine::SimTime start, const PrefillWork& prefill,
                     const DecodeWork& decode);
  // A decode-only step of `batch` sequences whose first iteration reads `context` KV
  // tokens, from `start`: times the next up to its cap of the `steady` iterations it runs
  // unchanged (the engine's steady_iterations).
  void begin_decode(const InstanceHardware& hw, engine::SimTime start, std::uint32_t batch, std::uint64_t context,
                    std::uint32_t steady);
  // New work arrived at `now`: a folded segment ends at the first iteration boundary at or
  // after now, where the unfolded model would let the work join. The new end when it moved.
  std::optional<engine::SimTime> cut(engine::SimTime now);

  engine::SimTime start() const { return start_; }
  engine::SimTime end() const { return end_; }
  std::uint32_t iterations() const { return iterations_; }
  // The end of its first iteration, and the longest of the others.
  engine::SimTime first_boundary() const { return start_ + first_; }
  engine::SimTime longest_later() const { return longest_later_; }
  // Useful work of its iterations (InstanceHardware::useful_ns).
  std::int64_t useful_ns() const { return useful_ns_; }
  // Iterations begun by `now` (at least its first).
  std::uint32_t begun(engine::SimTime now) const;
  // Its useful work done by `now`: whole iterations (exact integers), and the running
  // one's in proportion to its elapsed time (the figure an unfolded run's level gives).
  struct Useful {
    std::int64_t whole_ns = 0;
    double partial_ns = 0.0;
  };
  Useful useful_so_far(engine::SimTime now) const;

 private:
  void restart(std::uint32_t iterations);
  void add(std::uint32_t i, engine::SimTime length, std::int64_t useful);

  engine::SimTime start_;
  engine::SimTime end_;
  std::uint32_t iterations_ = 0;
  engine::SimTime first_;          // length of its first iteration
  engine::SimTime longest_later_;  // longest of the others
  std::int64_t useful_ns_ = 0;
  // Its iterations' lengths and useful work, timed once when it begins (a cut, the KV
  // taken so far and the work done so far read them instead of pricing again).
  struct Step {
    engine::SimTime length;
    std::int64_t useful_ns = 0;
  };
  std::vector<Step> steps_;
  bool prefill_ = false;  // a step with prompts: never cut
  bool cut_ = false;      // new work arrived: it ends at the next iteration boundary
  // Iterations this segment could time: short after a cut, doubling while segments run
  // whole, so a fold cut after m iterations has timed O(m) of them, whatever its length.
  std::uint32_t cap_ = 0;
};

}  // namespace meshsim::cluster
