#pragma once

#include <cstdint>
#include <optional>

#include "sim/engine/simulation.hpp"

namespace meshsim::engine {

// A cancellable, re-armable timer that delivers `payload` to `target` when it fires.
// Cancellation is lazy: arming or cancelling bumps a generation number, and an event
// whose generation is stale is dropped when it reaches the head of the queue. No search
// of the queue, no allocation.
//
// A timer given a rank fires after the FIFO events of its time, in rank order (see
// Simulation::schedule_ranked_at), however often it was re-armed.
class Timer final : private EventHandler {
 public:
  Timer(Simulation& sim, EventHandler& target, EventPayload payload = {},
        std::optional<std::uint32_t> rank = std::nullopt)
      : sim_(sim), target_(target), payload_(payload), rank_(rank) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Arms the timer for `time`, replacing any earlier deadline.
  void arm_at(SimTime time) {
    ++generation_;
    deadline_ = time;
    if (rank_) {
      sim_.schedule_ranked_at(time, *rank_, *this, EventPayload{generation_, 0});
    } else {
      sim_.schedule_at(time, *this, EventPayload{generation_, 0});
    }
  }
  void arm_after(SimTime delay) { arm_at(sim_.now() + delay); }
  void cancel() {
    ++generation_;
    deadline_.reset();
  }
  bool armed() const { return deadline_.has_value(); }
  std::optional<SimTime> deadline() const { return deadline_; }

 private:
  void on_event(const EventPayload& event) override {
    if (event.a != generation_) return;  // cancelled or re-armed since
    deadline_.reset();
    target_.on_event(payload_);
  }

  Simulation& sim_;
  EventHandler& target_;
  EventPayload payload_;
  std::optional<std::uint32_t> rank_;
  std::uint64_t generation_ = 0;
  std::optional<SimTime> deadline_;
};

}  // namespace meshsim::engine
