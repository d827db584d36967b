#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scheduler/world.hpp"

namespace meshsim::scheduler::testing {

// A clock the test sets, timers that fire when it advances, and agents whose cancel
// answers at once unless the test makes them hang.
class FakeWorld : public Clock, public TimerService, public Actuator {
 public:
  double now() const override { return now_; }
  void advance(double seconds) {
    const double until = now_ + seconds;
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      const auto it = timers_.begin();
      now_ = it->first.first;
      auto callback = std::move(it->second);
      timers_.erase(it);
      callback();
    }
    now_ = until;
  }

  TimerId call_after(double seconds, std::function<void()> callback) override {
    const TimerId id = next_timer_++;
    timers_.emplace(std::make_pair(now_ + seconds, id), std::move(callback));
    return id;
  }
  void cancel(TimerId id) override {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->first.second == id) {
        timers_.erase(it);
        return;
      }
    }
  }

  CancelReply cancel_task(const std::string& agent, const std::string& task_id, double timeout_s) override {
    cancels.push_back(agent + "/" + task_id);
    if (hanging_agents.count(agent) != 0) return CancelReply{false, timeout_s};
    return CancelReply{true, 0.0};
  }

  std::set<std::string> hanging_agents;
  std::vector<std::string> cancels;

 private:
  double now_ = 0.0;
  TimerId next_timer_ = 1;
  std::map<std::pair<double, TimerId>, std::function<void()>> timers_;
};

}  // namespace meshsim::scheduler::testing
