#include "sim/engine/simulation.hpp"

#include <string>
#include <utility>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::engine {

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::kConfigured: return "configured";
    case RunState::kRunning: return "running";
    case RunState::kPaused: return "paused";
    case RunState::kFinished: return "finished";
  }
  return "unknown";
}

Simulation::Simulation(std::uint64_t seed) : rng_(seed) { queue_.reserve(1024); }

void Simulation::check_schedule(SimTime time, std::string_view call) const {
  MESHSIM_CHECK(time >= now_, std::string(call) + ": event time " + std::to_string(time.us()) +
                                  " us is before now (" + std::to_string(now_.us()) + " us)");
  MESHSIM_CHECK(state_ != RunState::kFinished, std::string(call) + ": the simulation has finished");
  if (time > SimTime::max_representable()) {
    throw RangeError("the simulated clock would pass " + number_text(SimTime::kMaxSeconds) +
                     " s (an event at " + number_text(time.seconds()) + " s): check the workload's rate and the "
                     "performance model's figures");
  }
}

void Simulation::schedule_at(SimTime time, EventHandler& target, EventPayload payload) {
  check_schedule(time, "schedule_at");
  queue_.push(time, &target, payload);
}

void Simulation::schedule_ranked_at(SimTime time, std::uint32_t rank, EventHandler& target, EventPayload payload) {
  check_schedule(time, "schedule_ranked_at");
  queue_.push_ranked(time, rank, &target, payload);
}

void Simulation::schedule_after(SimTime delay, EventHandler& target, EventPayload payload) {
  MESHSIM_CHECK(delay >= SimTime::zero(), "schedule_after: negative delay");
  schedule_at(now_ + delay, target, payload);
}

void Simulation::set_periodic_hook(std::uint64_t every_events,
                                   std::function<void(const Simulation&)> hook) {
  MESHSIM_CHECK(every_events > 0, "set_periodic_hook: every_events must be positive");
  hook_every_ = every_events;
  hook_countdown_ = every_events;
  hook_ = std::move(hook);
}

void Simulation::enter_run(std::string_view call) {
  MESHSIM_CHECK(state_ != RunState::kRunning,
                std::string(call) + " called from inside an event handler");
  MESHSIM_CHECK(state_ != RunState::kFinished,
                std::string(call) + " called on a finished simulation");
  state_ = RunState::kRunning;
}

void Simulation::dispatch(const Event& event) {
  now_ = event.time;
  ++events_processed_;
  event.target->on_event(event.payload);
  if (hook_ && --hook_countdown_ == 0) {
    hook_countdown_ = hook_every_;
    hook_(*this);
  }
}

bool Simulation::step() {
  enter_run("step");
  const bool ran = !queue_.empty();
  if (ran) dispatch(queue_.pop());
  state_ = stop_requested_ ? RunState::kFinished : RunState::kPaused;
  return ran;
}

std::uint64_t Simulation::run_until(SimTime until) {
  enter_run("run_until");
  MESHSIM_CHECK(until >= now_, "run_until: target time is before now");
  const std::uint64_t before = events_processed_;
  while (!stop_requested_ && !queue_.empty() && queue_.top().time <= until) {
    dispatch(queue_.pop());
  }
  if (stop_requested_) {
    state_ = RunState::kFinished;
  } else {
    if (until != SimTime::max()) now_ = until;
    state_ = RunState::kPaused;
  }
  return events_processed_ - before;
}

std::uint64_t Simulation::run() {
  enter_run("run");
  const std::uint64_t before = events_processed_;
  while (!stop_requested_ && !queue_.empty()) dispatch(queue_.pop());
  state_ = RunState::kFinished;
  return events_processed_ - before;
}

}  // namespace meshsim::engine
