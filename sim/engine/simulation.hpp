#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "sim/engine/event_queue.hpp"
#include "sim/engine/rng.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::engine {

// The lifecycle a Simulation goes through; public entry points check it and name the
// offending call when it is wrong (e.g. run_until called from inside an event handler).
enum class RunState { kConfigured, kRunning, kPaused, kFinished };
std::string_view to_string(RunState state);

// One simulated world's clock, pending events and random streams. Not a singleton: any
// number of Simulations live in one process (vectorised RL environments, sweeps).
class Simulation {
 public:
  explicit Simulation(std::uint64_t seed);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  SimTime now() const { return now_; }
  RunState state() const { return state_; }
  std::uint64_t events_processed() const { return events_processed_; }
  // Includes lazily cancelled timer events that have not reached the head yet.
  std::size_t pending_events() const { return queue_.size(); }

  // Schedules `target.on_event(payload)` at `time` (>= now). Events at equal times run
  // in the order they were scheduled.
  void schedule_at(SimTime time, EventHandler& target, EventPayload payload = {});
  void schedule_after(SimTime delay, EventHandler& target, EventPayload payload = {});
  // Schedules an event that runs after every FIFO event at `time`, in increasing `rank`
  // among ranked ones (see EventQueue::push_ranked): its order among equal times is a
  // property of the handler, not of when it was scheduled.
  void schedule_ranked_at(SimTime time, std::uint32_t rank, EventHandler& target, EventPayload payload = {});

  // Runs the earliest event, if any; returns whether one ran.
  bool step();
  // Runs every event with time <= until, then leaves the clock at `until` (unless it is
  // SimTime::max()). Returns the number of events run.
  std::uint64_t run_until(SimTime until);
  // Runs until no event is left or stop() is called.
  std::uint64_t run();
  // Called from a handler: the current run ends after this event; the state becomes
  // kFinished.
  void stop() { stop_requested_ = true; }

  // Calls `hook` every `every_events` events (for progress reports: the hot loop only
  // decrements a counter).
  void set_periodic_hook(std::uint64_t every_events, std::function<void(const Simulation&)> hook);

  Rng& rng(std::string_view stream) { return rng_.stream(stream); }
  std::uint64_t seed() const { return rng_.seed(); }

 private:
  void enter_run(std::string_view call);
  void check_schedule(SimTime time, std::string_view call) const;
  void dispatch(const Event& event);

  SimTime now_ = SimTime::zero();
  RunState state_ = RunState::kConfigured;
  bool stop_requested_ = false;
  std::uint64_t events_processed_ = 0;
  EventQueue queue_;
  RngStreams rng_;
  std::uint64_t hook_every_ = 0;
  std::uint64_t hook_countdown_ = 0;
  std::function<void(const Simulation&)> hook_;
};

}  // namespace meshsim::engine
