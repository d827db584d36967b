#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "scheduler/world.hpp"
#include "sim/engine/simulation.hpp"

namespace meshsim::scheduler {

// The scheduling core on a simulation's clock: now() is the simulation's time in seconds,
// timers are engine events (FIFO among equal times, so a hold expiring at the same
// microsecond as another event runs in the order it was armed), and agents are simulated
// processes that answer a cancel at once. Hung agents (a cancel waited out until
// cancel_timeout) need the two-phase preemption an event handler requires, since it
// cannot move the clock forward as ManualWorld does: until then this world has none.
class SimWorld final : public Clock, public TimerService, public Actuator, private engine::EventHandler {
 public:
  explicit SimWorld(engine::Simulation& sim) : sim_(sim) {}

  double now() const override { return sim_.now().seconds(); }
  // Fires at the first microsecond at or after now + seconds (never early).
  TimerId call_after(double seconds, std::function<void()> callback) override;
  void cancel(TimerId id) override { callbacks_.erase(id); }
  CancelReply cancel_task(const std::string& agent, const std::string& task_id, double timeout_s) override;
  // Who runs the simulated processes: told of every cancel (from inside the core's call,
  // so it may only record and schedule, never call back into the core).
  using CancelListener = std::function<void(const std::string& agent, const std::string& task_id)>;
  void set_cancel_listener(CancelListener listener) { on_cancel_ = std::move(listener); }

  std::uint64_t cancels_asked() const { return cancels_; }
  std::size_t armed_timers() const { return callbacks_.size(); }

 private:
  void on_event(const engine::EventPayload& payload) override;

  engine::Simulation& sim_;
  std::unordered_map<TimerId, std::function<void()>> callbacks_;  // armed, not cancelled
  TimerId next_timer_ = 1;
  std::uint64_t cancels_ = 0;
  CancelListener on_cancel_;
};

}  // namespace meshsim::scheduler
