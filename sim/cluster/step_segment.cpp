#include "sim/cluster/step_segment.hpp"

#include <algorithm>

namespace meshsim::cluster {

using engine::SimTime;

void StepSegment::restart(std::uint32_t iterations) {
  iterations_ = iterations;
  steps_.resize(iterations);
  useful_ns_ = 0;
  longest_later_ = SimTime::zero();
  cut_ = false;
}

void StepSegment::add(std::uint32_t i, SimTime length, std::int64_t useful) {
  steps_[i] = Step{length, useful};
  useful_ns_ += useful;
  if (i == 0) {
    first_ = length;
  } else {
    longest_later_ = std::max(longest_later_, length);
  }
}

void StepSegment::begin_prefill(const InstanceHardware& hw, SimTime start, const PrefillWork& prefill,
                                const DecodeWork& decode) {
  start_ = start;
  prefill_ = true;
  restart(1);
  const SimTime length = hw.iteration_time(prefill, decode);
  add(0, length, hw.useful_ns(prefill, decode, length));
  end_ = start + length;
}

void StepSegment::begin_decode(const InstanceHardware& hw, SimTime start, std::uint32_t batch, std::uint64_t context,
                               std::uint32_t steady) {
  // The previous segment timed as many as it could and ran them all: this one may time
  // twice as many. Otherwise (cut, a prefill, the batch changed) it starts short again.
  const bool ran_whole = cap_ != 0 && iterations_ == cap_ && !cut_;
  cap_ = ran_whole ? std::min(2 * cap_, kFoldSegment) : kFirstSegment;
  start_ = start;
  prefill_ = false;
  restart(std::min(steady, cap_));
  SimTime end = start;
  for (std::uint32_t i = 0; i < iterations_; ++i) {
    const DecodeWork decode{batch, context + std::uint64_t{i} * batch};
    const SimTime length = hw.iteration_time(PrefillWork{}, decode);
    add(i, length, hw.useful_ns(PrefillWork{}, decode, length));
    end += length;
  }
  end_ = end;
}

std::optional<SimTime> StepSegment::cut(SimTime now) {
  if (cut_ || prefill_) return std::nullopt;
  cut_ = true;
  SimTime boundary = start_;
  SimTime longest_later;
  std::int64_t useful = 0;
  for (std::uint32_t i = 0; i < iterations_; ++i) {
    const SimTime length = steps_[i].length;
    useful += steps_[i].useful_ns;
    if (i > 0) longest_later = std::max(longest_later, length);
    boundary += length;
    if (boundary >= now) {
      iterations_ = i + 1;
      steps_.resize(i + 1);
      longest_later_ = longest_later;
      useful_ns_ = useful;
      if (boundary == end_) return std::nullopt;
      end_ = boundary;
      return boundary;
    }
  }
  return std::nullopt;
}

std::uint32_t StepSegment::begun(SimTime now) const {
  std::uint32_t begun = 1;
  SimTime start = start_ + first_;
  for (std::uint32_t i = 1; i < iterations_ && start < now; ++i) {
    ++begun;
    start += steps_[i].length;
  }
  return begun;
}

StepSegment::Useful StepSegment::useful_so_far(SimTime now) const {
  Useful done;
  SimTime start = start_;
  for (std::uint32_t i = 0; i < iterations_ && start < now; ++i) {
    const auto& step = steps_[i];
    if (start + step.length <= now) {
      done.whole_ns += step.useful_ns;
    } else {
      done.partial_ns += static_cast<double>(step.useful_ns) * static_cast<double>((now - start).us()) /
                         static_cast<double>(step.length.us());
    }
    start += step.length;
  }
  return done;
}

}  // namespace meshsim::cluster
