#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/world.hpp"

namespace meshsim::scheduler {

// A world moved by hand, for unit tests and as the reference sim/script's ScriptClock is
// tested against: a clock that advances when told (firing timers in time order on the
// way), and agents that answer a cancel at once unless hung, in which case the core waits
// out the timeout and the clock moves by it.
class ManualWorld : public Clock, public TimerService, public Actuator {
 public:
  double now() const override { return now_; }
  void advance(double seconds) {
    const double until = now_ + seconds;
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      const auto it = timers_.begin();
      // A timer a timed-out cancel overtook (see cancel_task) fires late, now: the
      // clock never goes back.
      now_ = std::max(now_, it->first.first);
      auto callback = std::move(it->second);
      timers_.erase(it);
      callback();
    }
    now_ = until;
  }
  // Resuming from a state file: the clock goes back to when it was saved, and the timers
  // of the abandoned timeline are dropped (the core re-arms its own).
  void rewind(double to) {
    timers_.clear();
    now_ = to;
  }

  TimerId call_after(double seconds, std::function<void()> callback) override {
    const TimerId id = next_timer_++;
    timers_.emplace(std::make_pair(now_ + seconds, id), std::move(callback));
    return id;
  }
  void cancel(TimerId id) override {
    std::erase_if(timers_, [id](const auto& kv) { return kv.first.second == id; });
  }

  CancelReply cancel_task(const std::string& agent, const std::string& task_id, double timeout_s) override {
    cancels.push_back(agent + "/" + task_id);
    if (hanging.count(agent) == 0) return CancelReply{true, 0.0};
    now_ += timeout_s;
    return CancelReply{false, timeout_s};
  }

  std::set<std::string> hanging;      // agents that never answer
  std::vector<std::string> cancels;   // "agent/task" of every cancel asked

 private:
  double now_ = 0.0;
  TimerId next_timer_ = 1;
  std::map<std::pair<double, TimerId>, std::function<void()>> timers_;
};

}  // namespace meshsim::scheduler
